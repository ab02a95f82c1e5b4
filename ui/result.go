package ui

import (
	"encoding/json"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// resultRow is one line of a job's result as the detail pane shows it: a label in the
// window's language and a value written for people; File is set when the value is a file the
// job wrote, which the pane offers to open.
type resultRow struct {
	Label, Value, File string
}

// hiddenResultFields are the result fields only machines read (ARNs, ids, storage locations)
// or that the pane already shows elsewhere (the summary line, the input file).
var hiddenResultFields = map[string]bool{
	"executionArn": true, "executionId": true, "jobId": true, "job_id": true,
	"outputBucket": true, "outputKey": true, "summary": true, "summaryJa": true,
	"message": true, "messageJa": true, "source": true, "path": true, "name": true,
	"status": true, // the badge at the top says it
}

// fieldOrder lists the families' well-known result fields in the order the pane shows them:
// what happened, the figures, the files written, then how. Each has a label under
// "field.<name>" in the translations.
var fieldOrder = []string{
	"reason",
	"totalRecords", "successCount", "errorCount", "users", "usersChanged", "table",
	"page_count", "extracted_text_length", "rows", "bytes", "success_count", "failed_count", "goal_id",
	"output_path", "errorsCsv", "reportXlsx",
	"encoding", "delimiter", "extraction_method", "kind", "errorRecords", "errorsTruncated",
	"toleratedFailurePercentage", "toleratedFailureCount", "processingTimeSeconds", "columns",
	"no_text_pages", "ocr_pages", "damaged_pages", "notes", "children",
	"cached", "converter_version", "sha256",
}

var fieldRank = func() map[string]int {
	m := map[string]int{}
	for i, k := range fieldOrder {
		m[k] = i
	}
	return m
}()

// maxResultRows bounds the pane: a large result cannot swamp it.
const maxResultRows = 24

// resultRows lays a job's result out for people: known fields under their translated names
// (others under their own, split into words), figures with digit groups, durations as
// durations, short lists of figures inline and longer lists and objects counted rather than
// dumped, files the job wrote marked for opening. A result that is not a JSON object becomes
// one clipped line. It never fails: any bytes a handler stored render.
func resultRows(tr *translator, raw json.RawMessage) []resultRow {
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" || trimmed == "null" {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return []resultRow{{Value: clip(compactJSON(raw), 600)}}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		if !hiddenResultFields[k] {
			keys = append(keys, k)
		}
	}
	// Known fields first, in fieldOrder; then the rest by name.
	sort.SliceStable(keys, func(a, b int) bool {
		ia, oka := fieldRank[keys[a]]
		ib, okb := fieldRank[keys[b]]
		switch {
		case oka && okb:
			return ia < ib
		case oka != okb:
			return oka
		}
		return keys[a] < keys[b]
	})
	var rows []resultRow
	for _, k := range keys {
		if len(rows) == maxResultRows {
			rows = append(rows, resultRow{Value: tr.T("result.more", len(keys)-maxResultRows)})
			break
		}
		label := fieldLabel(k)
		if _, known := fieldRank[k]; known {
			label = tr.T("field." + k)
		}
		value, file := resultValue(tr, k, obj[k])
		if value == "" {
			continue
		}
		rows = append(rows, resultRow{Label: label, Value: value, File: file})
	}
	return rows
}

// resultValue writes one field's value; file is the value when it names a file that exists.
func resultValue(tr *translator, key string, raw json.RawMessage) (value, file string) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return clip(compactJSON(raw), 160), ""
	}
	switch x := v.(type) {
	case nil:
		return "", ""
	case string:
		if x == "" {
			return "", ""
		}
		if filepath.IsAbs(x) {
			if st, err := os.Stat(x); err == nil && !st.IsDir() {
				return filepath.Base(x), x
			}
		}
		switch x {
		case "\t":
			return "TAB", ""
		case ",", ";", "|", " ":
			return `"` + x + `"`, ""
		}
		return clip(oneLine(x), 160), ""
	case bool:
		if x {
			return tr.T("result.yes"), ""
		}
		return tr.T("result.no"), ""
	case float64:
		return number(key, x), ""
	case []any:
		if len(x) == 0 {
			return "", ""
		}
		if s, ok := inlineList(x); ok {
			return s, ""
		}
		return tr.T("result.items", groupDigits(int64(len(x)))), ""
	case map[string]any:
		return tr.T("result.items", groupDigits(int64(len(x)))), ""
	}
	return clip(compactJSON(raw), 160), ""
}

// inlineList writes a short list of figures or words on one line; ok is false for a long list
// or one holding anything else.
func inlineList(x []any) (string, bool) {
	if len(x) > 12 {
		return "", false
	}
	parts := make([]string, 0, len(x))
	for _, e := range x {
		switch y := e.(type) {
		case float64:
			parts = append(parts, number("", y))
		case string:
			parts = append(parts, clip(oneLine(y), 40))
		default:
			return "", false
		}
	}
	return strings.Join(parts, ", "), true
}

// number writes a figure: seconds as a duration, whole numbers with digit groups, others with
// at most four significant digits.
func number(key string, x float64) string {
	lower := strings.ToLower(key)
	if strings.HasSuffix(lower, "seconds") && x >= 0 && x < 1e9 {
		return time.Duration(x * float64(time.Second)).Round(time.Millisecond).String()
	}
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return groupDigits(int64(x))
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// fieldLabel turns a field name (camelCase or snake_case) into words: "usersChanged" →
// "Users changed".
func fieldLabel(k string) string {
	var b strings.Builder
	for i, r := range k {
		switch {
		case r == '_' || r == '-':
			b.WriteByte(' ')
		case i > 0 && unicode.IsUpper(r):
			b.WriteByte(' ')
			b.WriteRune(unicode.ToLower(r))
		case i == 0:
			b.WriteRune(unicode.ToUpper(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// resultView renders rows as a two-column form; a file's value carries a button that opens it
// with the desktop's default application.
func (u *UI) resultView(rows []resultRow) fyne.CanvasObject {
	var cells []fyne.CanvasObject
	for _, r := range rows {
		label := widget.NewLabel(r.Label)
		label.TextStyle.Bold = true
		value := widget.NewLabel(r.Value)
		value.Wrapping = fyne.TextWrapWord
		value.Selectable = r.File == ""
		if r.File == "" {
			cells = append(cells, label, value)
			continue
		}
		path := r.File
		open := widget.NewButtonWithIcon(u.tr.T("result.open"), theme.FileIcon(), func() { u.openFile(path) })
		open.Importance = widget.LowImportance
		cells = append(cells, label, container.NewBorder(nil, nil, nil, open, value))
	}
	return container.New(layout.NewFormLayout(), cells...)
}

// openFile opens path with the desktop's default application (xdg-open on Linux).
func (u *UI) openFile(path string) {
	if u.fyneApp == nil {
		return
	}
	link, err := url.Parse(storage.NewFileURI(path).String())
	if err != nil {
		return
	}
	if err := u.fyneApp.OpenURL(link); err != nil {
		u.setStatus(u.tr.T("result.open_failed", filepath.Base(path)))
	}
}
