package csvjob

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
)

// FileSHA256 returns the hex SHA-256 of the file at path: the identity of a dropped file for
// duplicate detection.
func FileSHA256(ctx context.Context, path string) (string, error) {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if blob.InUse(err) {
		return "", blob.InUseError(name, err)
	}
	if err != nil {
		return "", job.Wrap(job.E014, err, name+" does not exist or cannot be read").WithJa(name + " が見つからないか、読み取れません。")
	}
	defer f.Close()
	sum, _, err := blob.SHA256(ctx, f)
	if blob.Cancelled(ctx, err) {
		return "", cancelled(err)
	}
	if err != nil {
		return "", job.Wrap(job.E004, err, "cannot read "+name).WithJa(name + " を読み取れません。")
	}
	return hex.EncodeToString(sum), nil
}

// Extensions are the file name extensions of CSV files JobDesk takes without looking inside.
var Extensions = []string{".csv", ".tsv"}

// notCSVExt are extensions of formats that other job families read (documents, archives, data
// files), never taken as CSV by content.
var notCSVExt = map[string]bool{".pdf": true, ".docx": true, ".doc": true, ".xlsx": true, ".xls": true,
	".xlsm": true, ".pptx": true, ".zip": true, ".md": true, ".json": true, ".xml": true, ".html": true,
	".htm": true, ".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".gz": true, ".go": true}

// Detect reports whether the file named path, whose first bytes are head, is a CSV job: by its
// extension (.csv, .tsv), or for other text files by content — a header and at least two more
// records that split on the same delimiter (, tab ; |) into the same two or more fields.
func Detect(path string, head []byte) (ok bool) {
	ext := strings.ToLower(filepath.Ext(path))
	for _, e := range Extensions {
		if ext == e {
			return true
		}
	}
	if notCSVExt[ext] {
		return false
	}
	return LooksLikeCSV(head)
}

// LooksLikeCSV reports whether head (the start of a file) is delimited text: valid in one of
// the detected encodings, not binary, and at least three complete records on which one delimiter
// agrees on a field count of two or more (allowing one ragged record in twenty).
func LooksLikeCSV(head []byte) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	if len(head) == 0 {
		return false
	}
	enc, bom := DetectEncoding(head, false)
	if isUTF16(enc) {
		head = []byte(decodeText(enc, head[bom:]))
		bom = 0
	} else if enc == "" || looksBinary(head) {
		return false
	}
	text := head[bom:]
	// Only complete records: cut at the last line break.
	if i := bytes.LastIndexByte(text, '\n'); i >= 0 {
		text = text[:i+1]
	} else {
		return false
	}
	for _, d := range Delimiters {
		r := NewReader(append([]byte(nil), text...), d, 1)
		counts := map[int]int{}
		total := 0
		for total < 200 && r.Next() {
			if len(r.Fields) == 1 && len(r.Fields[0]) == 0 {
				continue // blank line
			}
			counts[len(r.Fields)]++
			total++
		}
		if total < 3 {
			continue
		}
		best := 0
		for k, n := range counts {
			if k >= 2 && n > counts[best] {
				best = k
			}
		}
		if best >= 2 && counts[best]*20 >= total*19 {
			return true
		}
	}
	return false
}

// Check reports a bad forced encoding or delimiter in o as a usage error (E014) before a job is
// queued.
func (o *Options) Check() error {
	if o.Encoding != "" && normEncoding(o.Encoding) == "" {
		return job.Errorf(job.E014, "unknown encoding %q (utf-8, utf-8-bom, shift_jis, euc-jp, utf-16le, utf-16be)", o.Encoding).
			WithJa(fmt.Sprintf("文字コード %q は使えません（utf-8、shift_jis、euc-jp、utf-16le など）。", o.Encoding))
	}
	if o.Delimiter != "" {
		if _, err := chooseDelimiter(nil, DefaultSchema(), o.Delimiter, EncUTF8, ""); err != nil {
			return job.AsError(err).WithName("")
		}
	}
	return nil
}
