package convertfamily

import (
	"encoding/json"

	"jobdesk/app/family"
)

// ResultView describes a document conversion's result (engine/docjob): its pages, characters
// and rows, the Markdown written, how the text was taken out (OCR, damaged pages, notes), the
// entries of an archive, and whether a stored result was reused. Which converter wrote it is
// for support, not for people.
func (*Family) ResultView() family.ResultView {
	return family.ResultView{
		Outcome: []string{"reason"},
		Counts:  []string{"page_count", "extracted_text_length", "rows"},
		Files:   []string{"output_path"},
		Method: []string{"encoding", "extraction_method", "kind", "no_text_pages", "ocr_pages", "damaged_pages",
			"notes", "children"},
		Provenance: []string{"cached", "converter_version", "sha256"},
		Hidden:     []string{"converter_version", "mail"}, // a mail's header has a view of its own
		Label:      pagesLabel,
		Hide:       nominalPages,
		Summary: []family.SummaryFigure{
			{Field: "page_count", Words: "result.pages", By: "kind", ByWords: map[string]string{
				"pptx": "result.slides", "xls": "result.sheets", "xlsx": "result.sheets", "epub": "result.chapters",
				"eml": "result.mails", "msg": "result.mails", "image": "result.images"}},
			{Field: "extracted_text_length", Words: "result.chars"},
		},
	}
}

// pagelessKinds are the formats without pages (nor slides, sheets, chapters): their page count
// is always 1 and says nothing, so it is not shown (a 30-page contract is not "1 page").
var pagelessKinds = map[string]bool{
	"docx": true, "html": true, "mhtml": true, "txt": true, "csv": true, "json": true, "xml": true,
	"ipynb": true, "feed": true,
}

// nominalPages hides the page count of a format without pages.
func nominalPages(result map[string]json.RawMessage, field string) bool {
	if field != "page_count" {
		return false
	}
	var kind string
	json.Unmarshal(result["kind"], &kind)
	return pagelessKinds[kind]
}

// pagesLabel words a conversion's page count as its format counts: a deck's slides, a
// workbook's sheets, a book's chapters; other formats keep the label of pages.
func pagesLabel(result map[string]json.RawMessage, field string) (en, ja string, ok bool) {
	if field != "page_count" {
		return "", "", false
	}
	var kind string
	json.Unmarshal(result["kind"], &kind)
	switch kind {
	case "pptx":
		return "Slides", "スライド数", true
	case "xls", "xlsx":
		return "Sheets", "シート数", true
	case "epub":
		return "Chapters", "章の数", true
	case "eml", "msg":
		return "Messages", "メールの数", true
	case "image":
		return "Pictures", "画像の数", true
	}
	return "", "", false
}
