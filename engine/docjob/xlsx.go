package docjob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/xuri/excelize/v2"

	"jobdesk/engine/job"
)

// maxFormulaLookups bounds how many empty cells per sheet are checked for an uncached formula.
const maxFormulaLookups = 20000

// xlsxOptions are the options every workbook is opened with.
func xlsxOptions() excelize.Options {
	return excelize.Options{
		CultureInfo: excelize.CultureNameJaJP,
		// Built-in format 14 (and 22) is the short date: Japanese Excel shows it as 2024/4/1,
		// not 04-01-24. The [$-411] (Japanese) locale tag also lets excelize find its language
		// table directly instead of searching it for every date, about 4x faster on dates.
		ShortDatePattern:  "[$-411]yyyy/m/d",
		UnzipSizeLimit:    MaxTotalSize,
		UnzipXMLSizeLimit: 64 << 20, // a sheet this large stays in memory (read once, never written to a temporary file)
	}
}

// convertXLSX writes every sheet as a "## name" section: each block of cells set apart by empty
// rows and columns is its own Markdown table, the sheet's cell comments follow, then its charts'
// cached data (chart sheets and charts drawn on a worksheet). Values are
// what the cell shows (number formats applied: dates, Japanese-era dates, currency, percentages;
// Japanese culture for built-in formats); formulas give their cached value, computed when the
// file has none; a merged range repeats its value in every cell it covers; hidden sheets are
// marked "(hidden)".
func convertXLSX(ctx context.Context, data []byte, opt Options) (*Doc, error) {
	if isEncryptedOLE(data) {
		return nil, errPassword(KindXLSX)
	}
	f, err := excelize.OpenReader(bytes.NewReader(data), xlsxOptions())
	if err != nil {
		if strings.Contains(strings.ToLower(err.Error()), "password") || errors.Is(err, excelize.ErrWorkbookPassword) {
			return nil, errPassword(KindXLSX)
		}
		return nil, errDamaged(KindXLSX, err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	if len(sheets) == 0 {
		return nil, errDamaged(KindXLSX, reason("the workbook has no sheets"))
	}
	merges := mayHaveMerges(f, len(sheets))
	fast := newFastWorkbook(f)
	defer fast.close()
	d := &Doc{Kind: KindXLSX, Pages: len(sheets), Method: MethodNative}
	parts := newXLSXParts(ctx, data)
	var b strings.Builder
	for si, sheet := range sheets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		visible, _ := f.GetSheetVisible(sheet)
		title := "## " + escapeInline(oneLine(Clean(sheet)))
		if !visible {
			title += " (hidden)"
			d.Notes = append(d.Notes, "hidden sheet: "+sheet)
		}
		b.WriteString(title + "\n\n")
		grid, err := sheetGrid(ctx, f, sheet, merges, fast)
		if err != nil {
			var je *job.Error
			if errors.As(err, &je) || ctx.Err() != nil {
				return nil, err
			}
			b.WriteString("> (this sheet could not be read)\n\n")
			d.Notes = append(d.Notes, fmt.Sprintf("sheet %s could not be read: %v", sheet, err))
			continue
		}
		tables := splitBlocks(grid)
		charts := parts.charts(sheet)
		comments := sheetComments(f, parts, sheet)
		if len(tables) == 0 && len(charts) == 0 && len(comments) == 0 {
			b.WriteString("> (empty sheet)\n\n")
			continue
		}
		for _, rows := range tables {
			d.Rows += len(rows)
			writeTextTable(&b, rows)
			b.WriteString("\n")
		}
		for _, c := range comments {
			b.WriteString(c + "\n\n")
		}
		for _, c := range charts {
			b.WriteString(c + "\n")
		}
		if opt.Progress != nil {
			opt.Progress(float64(si+1)*90/float64(len(sheets)), fmt.Sprintf("sheet %d of %d", si+1, len(sheets)))
		}
	}
	d.Markdown = b.String()
	return d, nil
}

// sheetRows reads one sheet as display strings, fills merged ranges and uncached formulas,
// drops empty rows and trailing empty columns. The fast reader reads the sheet when it takes it
// (fast may be nil), excelize's row iterator otherwise; both give the same cells.
func sheetRows(ctx context.Context, f *excelize.File, sheet string, withMerges bool, fast *fastWorkbook) ([][]string, error) {
	grid, err := sheetGrid(ctx, f, sheet, withMerges, fast)
	if err != nil {
		return nil, err
	}
	return tidyGrid(grid), nil
}

// sheetGrid is sheetRows before the empty rows and columns are dropped: row r (0-based) of the
// grid is the sheet's row r+1.
func sheetGrid(ctx context.Context, f *excelize.File, sheet string, withMerges bool, fast *fastWorkbook) ([][]string, error) {
	var grid [][]string
	lookups := 0
	add := func(r int, cols []string) {
		for c := range cols {
			if cols[c] == "" && lookups < maxFormulaLookups {
				lookups++
				cell, _ := excelize.CoordinatesToCellName(c+1, r)
				if fm, _ := f.GetCellFormula(sheet, cell); fm != "" {
					if v, err := f.CalcCellValue(sheet, cell); err == nil {
						cols[c] = v
					}
				}
			}
			cols[c] = gannen(f, sheet, r, c, Clean(cols[c]))
		}
		for len(grid) < r-1 {
			grid = append(grid, nil)
		}
		grid = append(grid, cols)
	}
	err := errFastDecline
	if fast != nil {
		n := 0
		err = fast.readRows(sheet, func(r int, cols []string) error {
			if n++; n&1023 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			add(r, cols)
			return nil
		})
	}
	if err == errFastDecline {
		err = iterateRows(ctx, f, sheet, add)
	}
	if err != nil {
		return nil, err
	}
	var merges []excelize.MergeCell
	if withMerges {
		merges, _ = f.GetMergeCells(sheet)
	}
	for _, m := range merges {
		c1, r1, err1 := excelize.CellNameToCoordinates(m.GetStartAxis())
		c2, r2, err2 := excelize.CellNameToCoordinates(m.GetEndAxis())
		if err1 != nil || err2 != nil || r2-r1 > 10000 || c2-c1 > 1000 {
			continue
		}
		v := Clean(m.GetCellValue())
		for rr := r1; rr <= r2; rr++ {
			for len(grid) < rr {
				grid = append(grid, nil)
			}
			row := grid[rr-1]
			for len(row) < c2 {
				row = append(row, "")
			}
			for cc := c1; cc <= c2; cc++ {
				row[cc-1] = v
			}
			grid[rr-1] = row
		}
	}
	return grid, nil
}

// tidyGrid drops a sheet grid's empty rows, trailing empty cells and the columns empty in every
// row from the left.
func tidyGrid(grid [][]string) [][]string {
	out := grid[:0]
	width := 0
	for _, row := range grid {
		last := -1
		for i, v := range row {
			if strings.TrimSpace(v) != "" {
				last = i
			}
		}
		if last < 0 {
			continue
		}
		row = row[:last+1]
		if len(row) > width {
			width = len(row)
		}
		out = append(out, row)
	}
	// drop columns empty in every row from the left
	lead := width
	for _, row := range out {
		for i, v := range row {
			if strings.TrimSpace(v) != "" {
				if i < lead {
					lead = i
				}
				break
			}
		}
	}
	if lead > 0 && lead < width {
		for i := range out {
			if len(out[i]) > lead {
				out[i] = out[i][lead:]
			} else {
				out[i] = nil
			}
		}
	}
	return out
}

// iterateRows reads sheet with excelize's row iterator and calls add for every row up to the
// last, empty ones included, with its number and cells.
func iterateRows(ctx context.Context, f *excelize.File, sheet string, add func(r int, cols []string)) error {
	it, err := f.Rows(sheet)
	if err != nil {
		return err
	}
	defer it.Close()
	r := 0
	for it.Next() {
		r++
		if r&1023 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		cols, err := it.Columns()
		if err != nil {
			return err
		}
		add(r, cols)
	}
	return it.Error()
}

// mayHaveMerges reports whether any worksheet may hold merged cells. It is false only when all
// sheets' XML is in memory and none has a mergeCell element: GetMergeCells parses a whole sheet
// into memory (a fifth of the time of a 100,000-row sheet), so it is skipped when it cannot find
// anything. Large sheets excelize keeps in temporary files are not in memory, so they count as
// "may".
func mayHaveMerges(f *excelize.File, sheets int) bool {
	found, may := 0, false
	f.Pkg.Range(func(k, v any) bool {
		name, _ := k.(string)
		if !strings.HasPrefix(name, "xl/worksheets/") || !strings.HasSuffix(name, ".xml") || strings.Contains(name, "/_rels/") {
			return true
		}
		b, ok := v.([]byte)
		if !ok || bytes.Contains(b, []byte("mergeCell")) {
			may = true
			return false
		}
		found++
		return true
	})
	return may || found < sheets
}

var eraYearOne = regexp.MustCompile(`(明治|大正|昭和|平成|令和)1年`)

// gannen writes the first year of an era as 元年 ("令和元年5月1日"), as Excel shows a cell whose
// number format asks for it ([$-ja-JP-x-gannen]); v is the cell in row r (1-based), column c
// (0-based) as excelize formatted it. Only cells showing "era 1年" have their style looked up.
func gannen(f *excelize.File, sheet string, r, c int, v string) string {
	if !strings.Contains(v, "1年") || !eraYearOne.MatchString(v) {
		return v
	}
	cell, err := excelize.CoordinatesToCellName(c+1, r)
	if err != nil {
		return v
	}
	id, err := f.GetCellStyle(sheet, cell)
	if err != nil {
		return v
	}
	st, err := f.GetStyle(id)
	if err != nil || st == nil || st.CustomNumFmt == nil || !strings.Contains(strings.ToLower(*st.CustomNumFmt), "x-gannen") {
		return v
	}
	return eraYearOne.ReplaceAllString(v, "${1}元年")
}
