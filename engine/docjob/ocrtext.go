package docjob

import (
	"regexp"
	"strings"
)

// ocrNote opens every page whose text came from OCR, so a reader knows to check its figures
// against the original: OCR misreads digits and separators more than it misreads words.
const ocrNote = "> OCR: this page was read from an image; check figures against the original. / " +
	"このページは画像から文字認識（OCR）で読み取りました。数字は原本で確認してください。"

var (
	// tesseract reads the yen sign (￥ or ¥) as a backslash, sometimes with a space after it.
	ocrYen = regexp.MustCompile(`(?:\\|¥|￥)[ \t]?([0-9][0-9.,]*[0-9]|[0-9])`)
	// an amount in thousands: 1–3 digits, then groups of exactly three
	ocrThousands = regexp.MustCompile(`^[0-9]{1,3}(?:[.,][0-9]{3})+$`)
	// ASCII brackets around Japanese only ("(税込)") stand for full-width ones ("（税込）"),
	// and the space OCR puts before them is not in the original
	ocrParen = regexp.MustCompile(`[ \t]?\(([\p{Han}\p{Hiragana}\p{Katakana}ー・]+)\)`)
	// OCR separates Japanese characters with spaces that are not in the original
	ocrJaSpace = regexp.MustCompile(`([\p{Han}\p{Hiragana}\p{Katakana}ー、。「」（）])[ \t]+([\p{Han}\p{Hiragana}\p{Katakana}ー、。「」（）])`)
)

// normalizeOCR repairs what tesseract systematically misreads in Japanese business documents:
// a backslash before an amount is the yen sign (\128,700 → ￥128,700), an amount's thousands
// separators read as periods are commas (yen has no decimals: ￥128.700 → ￥128,700), ASCII
// brackets around Japanese are full-width ((税込) → （税込）), and spaces between Japanese
// characters are dropped.
func normalizeOCR(s string) string {
	s = ocrYen.ReplaceAllStringFunc(s, func(m string) string {
		num := ocrYen.FindStringSubmatch(m)[1]
		if ocrThousands.MatchString(num) {
			num = strings.ReplaceAll(num, ".", ",")
		}
		return "￥" + num
	})
	s = ocrParen.ReplaceAllString(s, "（$1）")
	for i := 0; i < 2; i++ { // twice: matches overlap in runs of single characters
		s = ocrJaSpace.ReplaceAllString(s, "$1$2")
	}
	return s
}
