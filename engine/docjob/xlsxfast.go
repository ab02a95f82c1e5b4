package docjob

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
)

// The fast sheet reader. excelize's row iterator decodes every cell with encoding/xml and parses
// the cell's number format again for every value, which is most of the time of a large sheet.
// fastWorkbook.readRows reads the sheetData of a worksheet straight from its XML bytes and
// formats each distinct (style, value) once, through excelize itself; integers in General or a
// plain integer format ("￥"#,##0 and the like) are written from a pattern learnt from excelize's
// own output. Every displayed string is the one excelize's iterator gives. The reader takes only
// sheets it reads exactly as that iterator does; anything else (rich-text inline strings, ISO
// dates, character references, comments, prefixed element names, rows out of order, unknown
// elements, malformed XML, ...) makes it decline before any row is reported, and the sheet is
// read by the iterator as before.

// errFastDecline means the fast reader does not take this sheet; the iterator reads it instead.
var errFastDecline = errors.New("sheet not taken by the fast reader")

// maxFormatMemo bounds the remembered formatted values; the memo and the scratch workbook start
// over when it is reached, so memory stays bounded whatever the number of distinct values.
var maxFormatMemo = 1 << 16

// fastCell is one <c> element: reference, style, type, raw value and whether it has a formula.
// ref and v point into the sheet XML (v still entity-encoded).
type fastCell struct {
	ref  []byte // r attribute, empty when absent
	s    int    // s attribute (style index)
	t    string // t attribute (cell type)
	v    []byte // <v> text
	is   []byte // the <t> text of an <is> (inline string) element
	hasF bool   // a <f> element is present
	hasI bool   // an <is> element is present
}

// fastWorkbook holds what the fast reader shares between the sheets of one workbook: the shared
// strings (resolved once each), the formatting memo and the scratch workbook that formats values
// with the original styles.
type fastWorkbook struct {
	f       *excelize.File
	sst     []string // resolved shared strings
	sstDone []bool
	sstRead bool
	scratch *excelize.File
	cells   map[int]string            // scratch cell per style and kind
	memo    map[int]map[string]string // per style and kind: raw value -> display
	memoLen int
	ints    map[int]*intFormat // per style: how it shows integers, learnt once
	broken  bool               // the scratch workbook failed once: decline every later sheet
}

// newFastWorkbook prepares the fast reader for f, or returns nil when f lacks the parts it
// needs (styles, workbook) in memory.
func newFastWorkbook(f *excelize.File) *fastWorkbook {
	if f.Styles == nil || f.WorkBook == nil {
		return nil
	}
	return &fastWorkbook{f: f, memo: map[int]map[string]string{}}
}

// close releases the scratch workbook.
func (w *fastWorkbook) close() {
	if w != nil && w.scratch != nil {
		w.scratch.Close()
	}
}

// sheetXML returns the in-memory XML of the worksheet named sheet when its location is
// unambiguous (the standard xl/workbook.xml layout, a plain worksheets/NAME.xml target) and
// excelize has not parsed it into a worksheet object (then its iterator would read a
// re-serialised copy instead).
func (w *fastWorkbook) sheetXML(sheet string) ([]byte, bool) {
	f := w.f
	wbPath := ""
	for _, rel := range w.rels("_rels/.rels") {
		if rel.Type == excelize.SourceRelationshipOfficeDocument {
			wbPath = strings.TrimPrefix(rel.Target, "/")
			break
		}
	}
	if wbPath != "xl/workbook.xml" || f.WorkBook.Sheets.Sheet == nil {
		return nil, false
	}
	id, matches := "", 0
	for _, s := range f.WorkBook.Sheets.Sheet {
		if strings.EqualFold(s.Name, sheet) {
			id = s.ID
			matches++
		}
	}
	if matches != 1 {
		return nil, false
	}
	target, found := "", 0
	for _, rel := range w.rels("xl/_rels/workbook.xml.rels") {
		if rel.ID == id {
			target = rel.Target
			found++
		}
	}
	if found != 1 {
		return nil, false
	}
	name := target
	if strings.HasPrefix(target, "/") {
		if name = strings.TrimPrefix(target, "/xl/"); name == target {
			return nil, false
		}
	}
	base, ok := strings.CutPrefix(name, "worksheets/")
	if !ok || base == "" || strings.ContainsAny(base, `/\`) || strings.Contains(base, "..") || !strings.HasSuffix(base, ".xml") {
		return nil, false
	}
	path := "xl/worksheets/" + base
	if ws, ok := f.Sheet.Load(path); ok && ws != nil {
		return nil, false
	}
	v, ok := f.Pkg.Load(path)
	if !ok {
		return nil, false
	}
	b, ok := v.([]byte)
	return b, ok && len(b) > 0
}

// relation is one <Relationship> of a relationships part.
type relation struct {
	ID     string `xml:"Id,attr"`
	Target string `xml:"Target,attr"`
	Type   string `xml:"Type,attr"`
}

// rels decodes the relationships part at path from the package, or returns nil.
func (w *fastWorkbook) rels(path string) []relation {
	v, ok := w.f.Pkg.Load(path)
	if !ok {
		return nil
	}
	b, ok := v.([]byte)
	if !ok {
		return nil
	}
	var doc struct {
		Rel []relation `xml:"Relationship"`
	}
	if xml.Unmarshal(b, &doc) != nil {
		return nil
	}
	return doc.Rel
}

// readRows reads sheet with the fast reader and calls row for every <row>, in order, with its
// row number and the cells excelize's iterator returns for it (formatted, gaps padded with "");
// an error from row stops the reading and is returned. It returns errFastDecline, having called
// row never, when it does not take the sheet.
func (w *fastWorkbook) readRows(sheet string, row func(r int, cols []string) error) error {
	if w.broken {
		return errFastDecline
	}
	data, ok := w.sheetXML(sheet)
	if !ok {
		return errFastDecline
	}
	body, ok := sheetDataOf(data)
	if !ok {
		return errFastDecline
	}
	w.loadShared(sheet)
	// First pass: check every row and cell, so nothing is reported for a sheet declined half way.
	if err := scanSheetData(body, func(r int, cells []fastCell) error {
		for i := range cells {
			if err := w.check(&cells[i]); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return errFastDecline
	}
	return scanSheetData(body, func(r int, cells []fastCell) error {
		cols := make([]string, 0, len(cells))
		col := 0
		for i := range cells {
			c := &cells[i]
			col++
			if len(c.ref) > 0 {
				n, err := refColumn(c.ref)
				if err != nil {
					return err // check accepted the reference: does not happen
				}
				col = n
			}
			val, err := w.value(c)
			if err != nil {
				return err
			}
			if val != "" || c.hasF {
				for n := col - len(cols); n > 1; n-- {
					cols = append(cols, "")
				}
				cols = append(cols, val)
			}
		}
		return row(r, cols)
	})
}

// loadShared makes excelize read the shared strings table the way its iterator does (through
// the first row of sheet), when the workbook has one in memory and it is not read yet.
func (w *fastWorkbook) loadShared(sheet string) {
	if w.f.SharedStrings != nil {
		return
	}
	if _, ok := w.f.Pkg.Load("xl/sharedStrings.xml"); !ok {
		return
	}
	it, err := w.f.Rows(sheet)
	if err != nil {
		return
	}
	if it.Next() {
		_, _ = it.Columns()
	}
	it.Close()
}

// styled reports whether excelize applies style s's number format (it ignores style 0 and
// indexes outside the cell formats).
func (w *fastWorkbook) styled(s int) bool {
	return s > 0 && w.f.Styles.CellXfs != nil && s < len(w.f.Styles.CellXfs.Xf)
}

// check returns errFastDecline unless value can give c exactly as excelize would; it prepares
// the scratch cells the formatting will use.
func (w *fastWorkbook) check(c *fastCell) error {
	if len(c.ref) > 0 {
		if _, err := refColumn(c.ref); err != nil {
			return errFastDecline
		}
	}
	styled := w.styled(c.s)
	switch c.t {
	case "str":
		return nil
	case "b":
		if v := string(c.v); v == "0" || v == "1" || !styled {
			return nil
		}
		return errFastDecline
	case "s":
		str, err := w.shared(c.v)
		if err != nil {
			return err
		}
		if !styled {
			return nil
		}
		if strings.Contains(str, "_x") || len(str) > 32000 {
			return errFastDecline
		}
		_, err = w.scratchCell(c.s, 's')
		return err
	case "inlineStr":
		str := w.inline(c)
		if strings.Contains(str, "_x") || (styled && len(str) > 32000) {
			return errFastDecline // excelize unescapes _xHHHH_ in inline strings
		}
		if !styled {
			return nil
		}
		_, err := w.scratchCell(c.s, 's')
		return err
	case "d":
		return errFastDecline
	default:
		if !styled {
			return nil
		}
		if !isPlainInt(c.v) {
			if v := unescapeText(c.v); v != "" && !excelNumeric(v) {
				return errFastDecline
			}
		}
		_, err := w.scratchCell(c.s, 'n')
		return err
	}
}

// value returns what excelize's iterator shows for c (check accepted it).
func (w *fastWorkbook) value(c *fastCell) (string, error) {
	switch c.t {
	case "str":
		return unescapeText(c.v), nil
	case "b":
		switch string(c.v) {
		case "1":
			return "TRUE", nil
		case "0":
			return "FALSE", nil
		}
		return unescapeText(c.v), nil
	case "s":
		str, err := w.shared(c.v)
		if err != nil || !w.styled(c.s) {
			return str, err
		}
		return w.format(c.s, 's', []byte(str))
	case "inlineStr":
		str := w.inline(c)
		if !w.styled(c.s) {
			return str, nil
		}
		return w.format(c.s, 's', []byte(str))
	default:
		if w.styled(c.s) {
			if isPlainInt(c.v) {
				if m := w.intFormatOf(c.s); m.ok && len(c.v) <= m.maxLen {
					return m.show(c.v), nil
				}
			}
			return w.format(c.s, 'n', c.v)
		}
		if isPlainInt(c.v) {
			return string(c.v), nil
		}
		v := unescapeText(c.v)
		if excelNumeric(v) {
			v = normalizeNumber(v)
		}
		return v, nil
	}
}

// inline returns the text of an inline-string cell: its <is> text, or its <v> text when it has
// no <is>.
func (w *fastWorkbook) inline(c *fastCell) string {
	if c.hasI {
		return unescapeText(c.is)
	}
	return unescapeText(c.v)
}

// excelNumeric is excelize's test for a numeric cell value: no underscore and a float parses.
func excelNumeric(s string) bool {
	if strings.Contains(s, "_") {
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// normalizeNumber writes a numeric cell value as excelize does before formatting it: all
// digits when it has at most 15 significant ones, else rounded to 15.
func normalizeNumber(s string) string {
	if isPlainInt([]byte(s)) {
		return s
	}
	flt, _ := strconv.ParseFloat(s, 64)
	plain := strconv.FormatFloat(flt, 'f', -1, 64)
	if len(plain)-strings.Count(plain, ".") > 15 {
		return strconv.FormatFloat(flt, 'G', 15, 64)
	}
	return plain
}

// isPlainInt reports whether s is an integer as FormatFloat(x, 'f', -1, 64) writes it (optional
// minus, no leading zero, not "-0") in at most 15 characters, sign included (excelize counts it
// among the 15 significant digits it keeps), which normalizeNumber keeps as it is.
func isPlainInt(s []byte) bool {
	d := bytes.TrimPrefix(s, []byte("-"))
	if len(d) == 0 || len(s) > 15 || (d[0] == '0' && (len(d) > 1 || len(s) > 1)) {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// intFormat is how one style shows integers when its number format is General or a plain
// integer format ("0" or "#,##0" between literal text or currency tags): the sign and text
// before the digits, the digits (grouped by thousands or not) and the text after them. It is
// learnt from excelize's own display of probe values and used only when it reproduces all of
// them.
type intFormat struct {
	ok       bool
	group    bool
	maxLen   int // longest value (sign included) it holds for
	pos, neg string
	suffix   string
}

// show returns the display of the plain integer v (isPlainInt, at most maxLen long).
func (m *intFormat) show(v []byte) string {
	pre := m.pos
	if v[0] == '-' {
		pre, v = m.neg, v[1:]
	}
	var b strings.Builder
	b.Grow(len(pre) + len(v) + len(v)/3 + len(m.suffix))
	b.WriteString(pre)
	for i, d := range v {
		if m.group && i > 0 && (len(v)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(d)
	}
	b.WriteString(m.suffix)
	return b.String()
}

// numFmtCode returns the number format code of style s as excelize resolves it (custom codes
// first, then the built-in General, "0" and "#,##0"); false for any other format.
func (w *fastWorkbook) numFmtCode(s int) (string, bool) {
	xf := w.f.Styles.CellXfs.Xf[s]
	id := 0
	if xf.NumFmtID != nil {
		id = *xf.NumFmtID
	}
	if w.f.Styles.NumFmts != nil {
		for _, nf := range w.f.Styles.NumFmts.NumFmt {
			if nf.NumFmtID == id {
				if nf.FormatCode16 != "" {
					return nf.FormatCode16, true
				}
				return nf.FormatCode, true
			}
		}
	}
	switch id {
	case 0:
		return "general", true
	case 1:
		return "0", true
	case 3:
		return "#,##0", true
	}
	return "", false
}

// intPattern reports whether code is General, or "0" or "#,##0" with only quoted text,
// backslash-escaped characters and [$...] currency or locale tags before and after, in one
// section; group tells whether the digits are grouped by thousands.
func intPattern(code string) (general, group, ok bool) {
	if strings.EqualFold(code, "general") {
		return true, false, true
	}
	literals := func(s string) (string, bool) {
		for s != "" {
			switch {
			case s[0] == '"':
				end := strings.IndexByte(s[1:], '"')
				if end < 0 {
					return s, false
				}
				s = s[end+2:]
			case s[0] == '\\':
				_, n := utf8.DecodeRuneInString(s[1:])
				if n == 0 {
					return s, false
				}
				s = s[1+n:]
			case strings.HasPrefix(s, "[$"):
				end := strings.IndexByte(s, ']')
				if end < 0 || strings.ContainsAny(s[2:end], `"\\[`) {
					return s, false
				}
				s = s[end+1:]
			default:
				return s, true
			}
		}
		return s, true
	}
	rest, good := literals(code)
	if !good {
		return false, false, false
	}
	switch {
	case strings.HasPrefix(rest, "#,##0"):
		group, rest = true, rest[len("#,##0"):]
	case strings.HasPrefix(rest, "0"):
		rest = rest[1:]
	default:
		return false, false, false
	}
	if rest, good = literals(rest); !good || rest != "" {
		return false, false, false
	}
	return false, group, true
}

// intFormatOf returns how style s shows integers, learning it on first use.
func (w *fastWorkbook) intFormatOf(s int) *intFormat {
	if m, ok := w.ints[s]; ok {
		return m
	}
	if w.ints == nil {
		w.ints = map[int]*intFormat{}
	}
	m := &intFormat{}
	w.ints[s] = m
	code, ok := w.numFmtCode(s)
	if !ok {
		return m
	}
	general, group, ok := intPattern(code)
	if !ok {
		return m
	}
	m.group, m.maxLen = group, 15
	pos := []string{"0", "7", "10", "999", "1000", "65536", "1234567", "123456789012345"}
	neg := []string{"-1", "-5", "-1000", "-1234567", "-12345678901234"}
	if general {
		// General switches to 10 significant digits above 11 characters.
		m.maxLen = 11
		pos[len(pos)-1], neg[len(neg)-1] = "99999999999", "-1234567890"
	}
	show := func(v string) (string, bool) {
		out, err := w.format(s, 'n', []byte(v))
		return out, err == nil
	}
	seven, ok := show("7")
	if !ok {
		return m
	}
	found := false
	for i := 0; i < len(seven) && !found; i++ {
		if seven[i] == '7' {
			m.pos, m.suffix = seven[:i], seven[i+1:]
			found = w.probe(m, pos, show)
		}
	}
	if !found {
		return m
	}
	big, ok := show(neg[len(neg)-1])
	digits := (&intFormat{group: group}).show([]byte(neg[len(neg)-1][1:]))
	if !ok || !strings.HasSuffix(big, digits+m.suffix) {
		return m
	}
	m.neg = big[:len(big)-len(digits)-len(m.suffix)]
	m.ok = w.probe(m, append(pos, neg...), show)
	return m
}

// probe reports whether m shows every value as excelize does.
func (w *fastWorkbook) probe(m *intFormat, values []string, show func(string) (string, bool)) bool {
	for _, v := range values {
		want, ok := show(v)
		if !ok || m.show([]byte(v)) != want {
			return false
		}
	}
	return true
}

// shared resolves a shared-string index as excelize does (surrounding spaces ignored, an
// unparsable index reads as 0); an index outside the in-memory table declines the sheet.
func (w *fastWorkbook) shared(v []byte) (string, error) {
	if len(v) == 0 {
		return "", nil
	}
	if !w.sstRead {
		w.sstRead = true
		if raw, ok := w.f.Pkg.Load("xl/sharedStrings.xml"); ok {
			if _, isBytes := raw.([]byte); isBytes && w.f.SharedStrings != nil {
				w.sst = make([]string, len(w.f.SharedStrings.SI))
				w.sstDone = make([]bool, len(w.f.SharedStrings.SI))
			}
		}
	}
	i := 0
	if len(v) <= 9 && digitsOnly(v) {
		for _, d := range v {
			i = i*10 + int(d-'0')
		}
	} else {
		i, _ = strconv.Atoi(strings.TrimSpace(unescapeText(v)))
	}
	if i < 0 || i >= len(w.sst) {
		return "", errFastDecline
	}
	if !w.sstDone[i] {
		w.sst[i] = w.f.SharedStrings.SI[i].String()
		w.sstDone[i] = true
	}
	return w.sst[i], nil
}

func digitsOnly(b []byte) bool {
	for _, d := range b {
		if d < '0' || d > '9' {
			return false
		}
	}
	return len(b) > 0
}

// format returns excelize's display of raw in style s: raw is a cell's <v> text (entity-encoded)
// when kind is 'n', a resolved string when 's'. Each distinct value is formatted once, by excelize, in a scratch workbook that shares
// the original styles, date system and options.
func (w *fastWorkbook) format(s int, kind byte, raw []byte) (string, error) {
	key := s*2 + int(kind&1)
	m := w.memo[key]
	if v, ok := m[string(raw)]; ok {
		return v, nil
	}
	cell, err := w.scratchCell(s, kind)
	if err != nil {
		return "", err
	}
	g := w.scratch
	if kind == 'n' {
		err = g.SetCellDefault("Sheet1", cell, unescapeText(raw))
	} else {
		err = g.SetCellStr("Sheet1", cell, string(raw))
	}
	var v string
	if err == nil {
		v, err = g.GetCellValue("Sheet1", cell)
	}
	if err != nil {
		w.broken = true
		return "", err
	}
	if w.memoLen >= maxFormatMemo {
		// Start over, scratch workbook included (it keeps every string it was given).
		clear(w.memo)
		w.memoLen = 0
		w.scratch.Close()
		w.scratch, w.cells = nil, nil
	}
	if m = w.memo[key]; m == nil {
		m = map[string]string{}
		w.memo[key] = m
	}
	m[string(raw)] = v
	w.memoLen++
	return v, nil
}

// scratchCell returns the scratch cell that holds values of style s and kind, creating the
// scratch workbook and styling the cell on first use.
func (w *fastWorkbook) scratchCell(s int, kind byte) (string, error) {
	if w.broken {
		return "", errFastDecline
	}
	if w.scratch == nil {
		g := excelize.NewFile(xlsxOptions())
		if g.WorkBook == nil {
			g.Close()
			w.broken = true
			return "", errFastDecline
		}
		g.Styles = w.f.Styles
		g.WorkBook.WorkbookPr = w.f.WorkBook.WorkbookPr
		w.scratch, w.cells = g, map[int]string{}
	}
	key := s*2 + int(kind&1)
	if cell, ok := w.cells[key]; ok {
		return cell, nil
	}
	col := 1
	if kind == 's' {
		col = 2
	}
	cell, err := excelize.CoordinatesToCellName(col, len(w.cells)+1)
	if err == nil {
		err = w.scratch.SetCellStyle("Sheet1", cell, cell, s)
	}
	if err != nil {
		w.broken = true
		return "", errFastDecline
	}
	w.cells[key] = cell
	return cell, nil
}

// refColumn returns the column of a cell reference such as "B12", as excelize reads it.
func refColumn(ref []byte) (int, error) {
	col, i := 0, 0
	for i < len(ref) && i < 3 && ref[i] >= 'A' && ref[i] <= 'Z' {
		col = col*26 + int(ref[i]-'A'+1)
		i++
	}
	if i > 0 && i < len(ref) && ref[i] >= '1' && ref[i] <= '9' && len(ref)-i <= 7 && col <= excelize.MaxColumns {
		row, j := 0, i
		for ; j < len(ref) && ref[j] >= '0' && ref[j] <= '9'; j++ {
			row = row*10 + int(ref[j]-'0')
		}
		if j == len(ref) && row <= excelize.TotalRows {
			return col, nil
		}
	}
	col, _, err := excelize.CellNameToCoordinates(string(ref))
	return col, err
}

// sheetDataOf returns the content of the <sheetData> element of a worksheet's XML, or false
// when the document is one the fast reader does not take: not UTF-8, holding a DOCTYPE,
// comments, CDATA or processing instructions after the declaration, a prefixed or missing
// sheetData, or, inside it, carriage returns, control characters, non-characters, "]]>" or
// character references other than the five predefined entities.
func sheetDataOf(data []byte) ([]byte, bool) {
	if len(data) == 0 || data[0] != '<' || !utf8.Valid(data) {
		return nil, false
	}
	rest := data
	if bytes.HasPrefix(rest, []byte("<?xml")) {
		end := bytes.Index(rest, []byte("?>"))
		if end < 0 {
			return nil, false
		}
		decl := rest[:end]
		if i := bytes.Index(decl, []byte("encoding")); i >= 0 {
			enc := strings.ToLower(string(decl[i:]))
			if !strings.Contains(enc, `"utf-8"`) && !strings.Contains(enc, `'utf-8'`) {
				return nil, false
			}
		}
		rest = rest[end+2:]
	}
	if bytes.Contains(rest, []byte("<!")) || bytes.Contains(rest, []byte("<?")) {
		return nil, false
	}
	start := bytes.Index(rest, []byte("<sheetData"))
	if start < 0 || bytes.Contains(rest[:start], []byte("<row")) || bytes.Contains(rest[:start], []byte(":row")) {
		return nil, false
	}
	if !prefixWellFormed(data[:len(data)-len(rest)+start]) {
		return nil, false
	}
	body := rest[start+len("<sheetData"):]
	switch {
	case bytes.HasPrefix(body, []byte("/>")):
		return nil, true
	case bytes.HasPrefix(body, []byte(">")):
		body = body[1:]
	default:
		return nil, false
	}
	end := bytes.Index(body, []byte("</sheetData>"))
	if end < 0 {
		return nil, false
	}
	body = body[:end]
	for _, b := range body {
		if b < 0x20 && b != '\t' && b != '\n' {
			return nil, false
		}
	}
	if bytes.Contains(body, []byte("\xef\xbf\xbe")) || bytes.Contains(body, []byte("\xef\xbf\xbf")) || bytes.Contains(body, []byte("]]>")) {
		return nil, false
	}
	for i := bytes.IndexByte(body, '&'); i >= 0; {
		if entityLen(body[i:]) == 0 {
			return nil, false
		}
		j := bytes.IndexByte(body[i+1:], '&')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return body, true
}

// prefixWellFormed reports whether encoding/xml reads the worksheet XML before <sheetData>
// without error (only running out of input, inside the still open root element, is expected):
// excelize's iterator reads that part first and stops at an error.
func prefixWellFormed(prefix []byte) bool {
	d := xml.NewDecoder(bytes.NewReader(prefix))
	read := int64(0) // end of the last complete token
	for {
		_, err := d.Token()
		if err == nil {
			read = d.InputOffset()
			continue
		}
		if err == io.EOF {
			return true
		}
		var se *xml.SyntaxError
		return errors.As(err, &se) && se.Msg == "unexpected EOF" && read == int64(len(prefix))
	}
}

// entities are the predefined XML entities, the only ones sheetDataOf accepts.
var entities = [...]struct{ name, val string }{{"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", `"`}, {"&apos;", "'"}}

// entityLen returns the length of the predefined entity b starts with, or 0.
func entityLen(b []byte) int {
	for _, e := range entities {
		if bytes.HasPrefix(b, []byte(e.name)) {
			return len(e.name)
		}
	}
	return 0
}

// unescapeText decodes element text holding only predefined entities (sheetDataOf checked).
func unescapeText(b []byte) string {
	if bytes.IndexByte(b, '&') < 0 {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		i := bytes.IndexByte(b, '&')
		if i < 0 {
			sb.Write(b)
			break
		}
		sb.Write(b[:i])
		b = b[i:]
		n := entityLen(b)
		if n == 0 { // not an entity (sheetDataOf refuses these): keep the ampersand
			sb.WriteByte('&')
			b = b[1:]
			continue
		}
		for _, e := range entities {
			if e.name == string(b[:n]) {
				sb.WriteString(e.val)
				break
			}
		}
		b = b[n:]
	}
	return sb.String()
}

// tag is one parsed start or end tag; attrs keeps, by local name, the attributes excelize
// reads from cells (r, s, t) and the typed ones encoding/xml parses on formulas (keptAttrs).
type tag struct {
	name        string
	end         bool // </name>
	selfClosing bool // <name/>
	attrs       []tagAttr
}

// tagAttr is one kept attribute; val points into the sheet XML.
type tagAttr struct {
	name string // one of keptAttrs
	val  []byte
}

// keptAttrs are the attribute names nextTag keeps: a cell's reference, style and type, and a
// formula's shared index and flags, which encoding/xml parses as numbers and booleans when
// excelize decodes the <f> element (a value it cannot parse makes excelize drop the cell).
var keptAttrs = map[string]bool{"r": true, "s": true, "t": true, "si": true, "aca": true, "dt2D": true,
	"dtr": true, "del1": true, "del2": true, "ca": true}

// Outcomes of nextTag.
const (
	tagOK  = iota
	tagEOF // no tag left: the rest is text
	tagBad // not a tag the fast reader takes
)

// tagName interns the element names the fast reader knows.
func tagName(b []byte) string {
	switch string(b) {
	case "row":
		return "row"
	case "c":
		return "c"
	case "v":
		return "v"
	case "f":
		return "f"
	case "is":
		return "is"
	case "t":
		return "t"
	}
	return "?" // any other element: declined by the caller
}

// nextTag skips the text up to the next tag in b and parses that tag into t. A tag must be
// well-formed, with quoted attribute values free of '<'; the r, s and t values must also be free
// of entities.
func nextTag(b []byte, t *tag) (text, rest []byte, outcome int) {
	i := bytes.IndexByte(b, '<')
	if i < 0 {
		return b, nil, tagEOF
	}
	text, b = b[:i], b[i+1:]
	t.end, t.selfClosing, t.attrs = false, false, t.attrs[:0]
	if len(b) > 0 && b[0] == '/' {
		t.end = true
		b = b[1:]
	}
	n := 0
	for n < len(b) && !isXMLSpace(b[n]) && b[n] != '>' && b[n] != '/' {
		n++
	}
	if n == len(b) || !xmlName(b[:n]) {
		return nil, nil, tagBad
	}
	t.name = tagName(b[:n])
	b = b[n:]
	for {
		for len(b) > 0 && isXMLSpace(b[0]) {
			b = b[1:]
		}
		if len(b) == 0 {
			return nil, nil, tagBad
		}
		switch b[0] {
		case '>':
			return text, b[1:], tagOK
		case '/':
			if t.end || len(b) < 2 || b[1] != '>' {
				return nil, nil, tagBad
			}
			t.selfClosing = true
			return text, b[2:], tagOK
		}
		if t.end {
			return nil, nil, tagBad
		}
		n = 0
		for n < len(b) && !isXMLSpace(b[n]) && b[n] != '=' && b[n] != '>' && b[n] != '/' && b[n] != '<' {
			n++
		}
		if !xmlName(b[:n]) {
			return nil, nil, tagBad
		}
		name := b[:n]
		b = b[n:]
		for len(b) > 0 && isXMLSpace(b[0]) {
			b = b[1:]
		}
		if len(b) == 0 || b[0] != '=' {
			return nil, nil, tagBad
		}
		b = b[1:]
		for len(b) > 0 && isXMLSpace(b[0]) {
			b = b[1:]
		}
		if len(b) == 0 || (b[0] != '"' && b[0] != '\'') {
			return nil, nil, tagBad
		}
		q := b[0]
		end := bytes.IndexByte(b[1:], q)
		if end < 0 {
			return nil, nil, tagBad
		}
		val := b[1 : 1+end]
		if bytes.IndexByte(val, '<') >= 0 {
			return nil, nil, tagBad
		}
		b = b[2+end:]
		if len(b) > 0 && !isXMLSpace(b[0]) && b[0] != '>' && b[0] != '/' {
			return nil, nil, tagBad
		}
		local := name // encoding/xml's local name: after the colon when both sides are non-empty
		if c := bytes.IndexByte(name, ':'); c > 0 && c < len(name)-1 {
			local = name[c+1:]
		}
		if keptAttrs[string(local)] {
			if bytes.IndexByte(val, '&') >= 0 {
				return nil, nil, tagBad
			}
			t.attrs = append(t.attrs, tagAttr{string(local), val})
		}
	}
}

// xmlName reports whether b is an ASCII XML name encoding/xml reads without error (a letter,
// '_' or ':' first, then letters, digits, '_', ':', '.', '-'; at most one colon). Other names,
// non-ASCII ones included, decline the sheet.
func xmlName(b []byte) bool {
	if len(b) == 0 || bytes.Count(b, []byte(":")) > 1 {
		return false
	}
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == ':':
		case i > 0 && (c >= '0' && c <= '9' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}

func isXMLSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// attr returns the value of the kept attribute name and whether it is present; ok is false when
// it is repeated.
func (t *tag) attr(name string) (val []byte, present, ok bool) {
	for _, a := range t.attrs {
		if a.name == name {
			if present {
				return nil, true, false
			}
			val, present = a.val, true
		}
	}
	return val, present, true
}

// scanSheetData parses the content of <sheetData> (rows of cells holding <v> and <f>) and calls
// row for each <row> with its number (the r attribute, or one past the previous row) and its
// cells. It returns errFastDecline for any structure excelize's iterator could read
// differently: other elements, inline strings, rows out of order or beyond the sheet, unparsable
// styles, repeated values, mismatched tags.
func scanSheetData(body []byte, row func(r int, cells []fastCell) error) error {
	var (
		t     tag
		cells []fastCell
		prev  int
		out   int
	)
	b := body
	for {
		if _, b, out = nextTag(b, &t); out == tagEOF {
			return nil
		} else if out != tagOK || t.name != "row" || t.end {
			return errFastDecline
		}
		r := prev + 1
		if v, present, good := t.attr("r"); !good {
			return errFastDecline
		} else if present {
			n, err := strconv.Atoi(string(v))
			if err != nil || n <= prev || n > excelize.TotalRows {
				return errFastDecline
			}
			r = n
		}
		prev = r
		cells = cells[:0]
		if !t.selfClosing {
			for {
				if _, b, out = nextTag(b, &t); out != tagOK {
					return errFastDecline
				}
				if t.end && t.name == "row" {
					break
				}
				if t.end || t.name != "c" {
					return errFastDecline
				}
				var c fastCell
				var err error
				if b, err = scanCell(b, &t, &c); err != nil {
					return err
				}
				cells = append(cells, c)
			}
		}
		if err := row(r, cells); err != nil {
			return err
		}
	}
}

// formulaAttrsValid reports whether encoding/xml parses the typed attributes of the <f> tag t:
// si as an integer, the flags as booleans.
func formulaAttrsValid(t *tag) bool {
	for _, a := range t.attrs {
		v := strings.TrimSpace(string(a.val))
		switch a.name {
		case "si":
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				return false
			}
		case "aca", "dt2D", "dtr", "del1", "del2", "ca":
			if _, err := strconv.ParseBool(v); err != nil {
				return false
			}
		}
	}
	return true
}

// scanInline reads the content of an <is> element up to and including its end tag. It takes
// only plain text, a single <t>; rich-text runs and phonetic guides decline the sheet.
func scanInline(b []byte, t *tag, c *fastCell) ([]byte, error) {
	var out int
	if _, b, out = nextTag(b, t); out != tagOK {
		return nil, errFastDecline
	}
	if t.end && t.name == "is" {
		return b, nil // <is></is>: no text
	}
	if t.end || t.name != "t" {
		return nil, errFastDecline
	}
	if !t.selfClosing {
		end := bytes.Index(b, []byte("</t>"))
		if end < 0 || bytes.IndexByte(b[:end], '<') >= 0 {
			return nil, errFastDecline
		}
		c.is = b[:end]
		b = b[end+len("</t>"):]
	}
	if _, b, out = nextTag(b, t); out != tagOK || !t.end || t.name != "is" {
		return nil, errFastDecline
	}
	return b, nil
}

// scanCell reads one <c> element whose start tag is t, up to and including its end tag.
func scanCell(b []byte, t *tag, c *fastCell) ([]byte, error) {
	ref, _, ok1 := t.attr("r")
	s, sPresent, ok2 := t.attr("s")
	typ, _, ok3 := t.attr("t")
	if !ok1 || !ok2 || !ok3 {
		return nil, errFastDecline
	}
	c.ref = ref
	switch string(typ) {
	case "":
		c.t = ""
	case "s":
		c.t = "s"
	case "n":
		c.t = "n"
	case "str":
		c.t = "str"
	case "inlineStr":
		c.t = "inlineStr"
	default:
		c.t = string(typ)
	}
	if sPresent {
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil {
			return nil, errFastDecline
		}
		c.s = int(n)
	}
	if t.selfClosing {
		return b, nil
	}
	haveV := false
	for {
		var out int
		if _, b, out = nextTag(b, t); out != tagOK {
			return nil, errFastDecline
		}
		if t.end {
			if t.name != "c" {
				return nil, errFastDecline
			}
			return b, nil
		}
		var closing string
		switch t.name {
		case "v":
			if haveV {
				return nil, errFastDecline
			}
			haveV, closing = true, "</v>"
		case "f":
			c.hasF, closing = true, "</f>"
			if !formulaAttrsValid(t) {
				return nil, errFastDecline
			}
		case "is":
			if c.hasI {
				return nil, errFastDecline
			}
			c.hasI = true
			if t.selfClosing {
				continue
			}
			var err error
			if b, err = scanInline(b, t, c); err != nil {
				return nil, err
			}
			continue
		default:
			return nil, errFastDecline
		}
		if t.selfClosing {
			continue
		}
		end := bytes.Index(b, []byte(closing))
		if end < 0 || bytes.IndexByte(b[:end], '<') >= 0 {
			return nil, errFastDecline
		}
		if t.name == "v" {
			c.v = b[:end]
		}
		b = b[end+len(closing):]
	}
}
