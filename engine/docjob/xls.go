package docjob

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	utf16std "unicode/utf16"

	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
)

// Limits of one legacy workbook: cells kept per sheet and the grid size, so a small file that
// declares a cell at row 65535, column 255 does not allocate the whole grid.
const (
	xlsMaxCells = 1_200_000 // well under 300 MB of memory for the largest sheets
	xlsMaxSlots = 8_000_000 // grid slots (cells and the empty ones before them in their row)
	xlsMaxRows  = 65536     // BIFF8's own limits
	xlsMaxCols  = 256
)

// errSheetTruncated marks a sheet whose cells ran past the limits: the cells read are kept.
var errSheetTruncated = errors.New("sheet larger than the limits")

// convertXLS reads an Excel 97–2003 workbook (BIFF8, and BIFF5/7 from Excel 95) from its OLE2
// container, in pure Go: the shared string table (strings continued across CONTINUE records,
// compressed and UTF-16 characters), byte strings in the workbook's code page (932 = Shift_JIS
// and the other ANSI code pages), numbers formatted by their cell's number format (dates and
// times, Japanese era dates, percentages, thousands), formulas' cached results, merged ranges
// repeated in every cell they cover, every worksheet as a "## name" section (hidden ones marked,
// chart sheets named; cell comments listed under the tables; blocks of cells set apart by empty rows and columns as separate tables).
// An encrypted workbook (FILEPASS) is E005.
func convertXLS(ctx context.Context, data []byte, opt Options) (*Doc, error) {
	c, err := openCFB(data)
	if err != nil {
		return nil, errDamaged(KindXLS, err)
	}
	if isEncryptedOLE(data) {
		return nil, errPassword(KindXLS)
	}
	wb, ok, err := c.stream("Workbook", "Book")
	if err != nil {
		return nil, errDamaged(KindXLS, err)
	}
	if !ok {
		return nil, errDamaged(KindXLS, reason("the file holds no workbook stream"))
	}
	x := &xlsReader{ctx: ctx, data: wb, enc: charmap.Windows1252}
	if err := x.globals(); err != nil {
		if _, ok := err.(passwordErr); ok {
			return nil, errPassword(KindXLS)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errDamaged(KindXLS, err)
	}
	if len(x.sheets) == 0 {
		return nil, errDamaged(KindXLS, reason("the workbook has no sheets"))
	}
	d := &Doc{Kind: KindXLS, Pages: len(x.sheets), Method: MethodNative}
	var b strings.Builder
	for i, sh := range x.sheets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		title := "## " + escapeInline(oneLine(Clean(sh.name)))
		switch sh.visible {
		case 0:
		default:
			title += " (hidden)"
			d.Notes = append(d.Notes, "hidden sheet: "+sh.name)
		}
		b.WriteString(title + "\n\n")
		if sh.kind == 2 {
			b.WriteString("> (chart sheet)\n\n")
			continue
		}
		if sh.kind != 0 && sh.kind != 1 {
			b.WriteString("> (macro sheet, not converted)\n\n")
			continue
		}
		x.comments = nil
		grid, err := x.sheet(sh.offset)
		if err == errSheetTruncated {
			d.TruncatedPages = append(d.TruncatedPages, i+1)
			d.Notes = append(d.Notes, fmt.Sprintf("sheet %s has more cells than are read; the first ones were kept", sh.name))
			err = nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			b.WriteString("> (this sheet could not be read)\n\n")
			d.Notes = append(d.Notes, fmt.Sprintf("sheet %s could not be read: %v", sh.name, err))
			continue
		}
		for r := range grid {
			for c := range grid[r] {
				grid[r][c] = Clean(grid[r][c])
			}
		}
		tables := splitBlocks(grid)
		grid = nil
		if len(tables) == 0 && len(x.comments) == 0 {
			b.WriteString("> (empty sheet)\n\n")
			continue
		}
		b.Grow(tablesSize(tables)) // one allocation for a large sheet, not a doubling series
		for _, rows := range tables {
			d.Rows += len(rows)
			writeTextTable(&b, rows)
			b.WriteString("\n")
		}
		for _, c := range x.comments {
			b.WriteString(c + "\n\n")
		}
		if opt.Progress != nil {
			opt.Progress(float64(i+1)*90/float64(len(x.sheets)), fmt.Sprintf("sheet %d of %d", i+1, len(x.sheets)))
		}
	}
	d.Markdown = b.String()
	return d, nil
}

// tablesSize estimates the Markdown bytes of tables (cells, separators, rule lines).
func tablesSize(tables [][][]string) int {
	n := 0
	for _, t := range tables {
		w := 0
		for _, r := range t {
			w = max(w, len(r))
			for _, c := range r {
				n += len(c)
			}
		}
		n += (len(t) + 1) * (3*w + 2)
	}
	return n
}

type passwordErr struct{}

func (passwordErr) Error() string { return "the workbook is encrypted" }

type xlsSheet struct {
	name    string
	offset  uint32
	visible byte // 0 visible, 1 hidden, 2 very hidden
	kind    byte // 0 worksheet, 1 macro sheet (BIFF5: also worksheet), 2 chart, 6 VB module
}

type xlsReader struct {
	ctx      context.Context
	data     []byte
	biff8    bool
	enc      encoding.Encoding // code page of byte strings (BIFF5)
	sst      []string
	formats  map[uint16]string // number format index → format code
	xfs      []uint16          // XF index → number format index
	date1904 bool
	sheets   []xlsSheet
	comments []string // the comments of the sheet last read
}

// record reads the record at off: its type, its data and the offset of the next one.
func (x *xlsReader) record(off int) (typ uint16, body []byte, next int, ok bool) {
	if off+4 > len(x.data) {
		return 0, nil, off, false
	}
	typ = binary.LittleEndian.Uint16(x.data[off:])
	n := int(binary.LittleEndian.Uint16(x.data[off+2:]))
	if off+4+n > len(x.data) {
		return typ, x.data[off+4:], len(x.data), true
	}
	return typ, x.data[off+4 : off+4+n], off + 4 + n, true
}

// globals reads the workbook globals substream: BOF version, code page, date system, formats,
// XFs, sheets and the shared string table.
func (x *xlsReader) globals() error {
	x.formats = map[uint16]string{}
	typ, body, off, ok := x.record(0)
	if !ok || (typ != 0x0809 && typ != 0x0409 && typ != 0x0209) {
		return errors.New("the workbook stream does not start with a BOF record")
	}
	if len(body) >= 2 && binary.LittleEndian.Uint16(body) == 0x0600 {
		x.biff8 = true
	}
	if !x.biff8 && typ == 0x0809 && len(body) >= 2 && binary.LittleEndian.Uint16(body) != 0x0500 {
		return reason("this Excel file is older than Excel 95 (BIFF2–4) and cannot be read")
	}
	if typ != 0x0809 {
		return reason("this Excel file is older than Excel 95 (BIFF2–4) and cannot be read")
	}
	for count := 0; ; count++ {
		if count&4095 == 0 && x.ctx.Err() != nil {
			return x.ctx.Err()
		}
		typ, body, next, ok := x.record(off)
		if !ok {
			return nil
		}
		switch typ {
		case 0x000A: // EOF
			return nil
		case 0x002F: // FILEPASS
			return passwordErr{}
		case 0x0042: // CODEPAGE
			if len(body) >= 2 {
				x.enc = codePage(binary.LittleEndian.Uint16(body))
			}
		case 0x0022: // DATEMODE
			x.date1904 = len(body) >= 2 && binary.LittleEndian.Uint16(body) == 1
		case 0x041E, 0x001E: // FORMAT
			if len(body) >= 2 {
				idx := binary.LittleEndian.Uint16(body)
				if x.biff8 {
					s, _ := x.unicodeString(body[2:], 2)
					x.formats[idx] = s
				} else if len(body) >= 3 {
					x.formats[idx] = x.byteString(body[3:min(len(body), 3+int(body[2]))])
				}
			}
		case 0x00E0: // XF
			if len(body) >= 4 {
				x.xfs = append(x.xfs, binary.LittleEndian.Uint16(body[2:]))
			}
		case 0x0085: // BOUNDSHEET
			if len(body) >= 8 {
				sh := xlsSheet{offset: binary.LittleEndian.Uint32(body), visible: body[4], kind: body[5]}
				if x.biff8 {
					sh.name, _ = x.unicodeString(body[6:], 1)
				} else {
					n := int(body[6])
					sh.name = x.byteString(body[7:min(len(body), 7+n)])
				}
				x.sheets = append(x.sheets, sh)
			}
		case 0x00FC: // SST
			parts := [][]byte{body}
			n := next
			for {
				t, b, nn, ok := x.record(n)
				if !ok || t != 0x003C {
					break
				}
				parts = append(parts, b)
				n = nn
			}
			x.readSST(parts)
			next = n
		}
		off = next
	}
}

// codePage maps a CODEPAGE record to the encoding of byte strings.
func codePage(cp uint16) encoding.Encoding {
	switch cp {
	case 932:
		return japanese.ShiftJIS
	case 936:
		return simplifiedchinese.GBK
	case 949:
		return korean.EUCKR
	case 950:
		return traditionalchinese.Big5
	case 1250:
		return charmap.Windows1250
	case 1251:
		return charmap.Windows1251
	case 10000, 0x8000:
		return charmap.Macintosh
	}
	return charmap.Windows1252
}

func (x *xlsReader) byteString(b []byte) string {
	s, err := x.enc.NewDecoder().Bytes(b)
	if err != nil {
		return string(b)
	}
	return string(s)
}

// unicodeString reads a BIFF8 XLUnicodeString whose character count takes lenBytes (1 or 2)
// bytes, and returns it with the bytes it used.
func (x *xlsReader) unicodeString(b []byte, lenBytes int) (string, int) {
	if len(b) < lenBytes+1 {
		return "", len(b)
	}
	var n int
	if lenBytes == 1 {
		n = int(b[0])
	} else {
		n = int(binary.LittleEndian.Uint16(b))
	}
	flags := b[lenBytes]
	p := lenBytes + 1
	var runs, ext int
	if flags&0x08 != 0 && p+2 <= len(b) {
		runs = int(binary.LittleEndian.Uint16(b[p:]))
		p += 2
	}
	if flags&0x04 != 0 && p+4 <= len(b) {
		ext = int(binary.LittleEndian.Uint32(b[p:]))
		p += 4
	}
	var s string
	if flags&1 != 0 {
		end := min(len(b), p+2*n)
		s = decodeUTF16LE(b[p:end])
		p = end
	} else {
		end := min(len(b), p+n)
		s = latin1(b[p:end])
		p = end
	}
	p += 4*runs + ext
	return s, min(p, len(b))
}

func decodeUTF16LE(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16std.Decode(u))
}

// latin1 decodes BIFF8's "compressed" characters: each byte is a UTF-16 code unit below 256.
func latin1(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// readSST reads the shared string table from the SST record and its CONTINUE records. A
// string's characters may break at a record boundary; the continuation starts with a new flags
// byte saying whether the rest is compressed or UTF-16. Rich-text runs and phonetic data (the
// furigana Japanese Excel stores) are skipped, wherever they break.
func (x *xlsReader) readSST(parts [][]byte) {
	if len(parts[0]) < 8 {
		return
	}
	unique := int(binary.LittleEndian.Uint32(parts[0][4:]))
	pi, p := 0, 8
	cur := parts[0]
	// advance moves to the next part when the current one is used up
	advance := func() bool {
		for p >= len(cur) {
			pi++
			if pi >= len(parts) {
				return false
			}
			cur, p = parts[pi], 0
		}
		return true
	}
	// skip skips n bytes that may run across parts
	skip := func(n int) {
		for n > 0 {
			if !advance() {
				return
			}
			k := min(n, len(cur)-p)
			p += k
			n -= k
		}
	}
	read := func(n int) []byte {
		var out []byte
		for len(out) < n {
			if !advance() {
				return out
			}
			k := min(n-len(out), len(cur)-p)
			out = append(out, cur[p:p+k]...)
			p += k
		}
		return out
	}
	x.sst = make([]string, 0, min(unique, 1<<20))
	for i := 0; i < unique; i++ {
		if i&4095 == 0 && x.ctx.Err() != nil {
			return
		}
		if !advance() {
			return
		}
		hdr := read(3)
		if len(hdr) < 3 {
			return
		}
		n := int(binary.LittleEndian.Uint16(hdr))
		flags := hdr[2]
		var runs, ext int
		if flags&0x08 != 0 {
			b := read(2)
			if len(b) == 2 {
				runs = int(binary.LittleEndian.Uint16(b))
			}
		}
		if flags&0x04 != 0 {
			b := read(4)
			if len(b) == 4 {
				ext = int(binary.LittleEndian.Uint32(b))
			}
		}
		wide := flags&1 != 0
		var sb strings.Builder
		left := n
		for left > 0 {
			if p >= len(cur) {
				// the characters continue in the next record, after a new flags byte
				pi++
				if pi >= len(parts) {
					break
				}
				cur, p = parts[pi], 0
				if len(cur) == 0 {
					continue
				}
				wide = cur[0]&1 != 0
				p = 1
				continue
			}
			if wide {
				k := min(left, (len(cur)-p)/2)
				if k == 0 {
					p = len(cur)
					continue
				}
				sb.WriteString(decodeUTF16LE(cur[p : p+2*k]))
				p += 2 * k
				left -= k
			} else {
				k := min(left, len(cur)-p)
				sb.WriteString(latin1(cur[p : p+k]))
				p += k
				left -= k
			}
		}
		skip(4*runs + ext)
		x.sst = append(x.sst, sb.String())
	}
}

// sheet reads one worksheet substream into a grid of display strings.
func (x *xlsReader) sheet(offset uint32) ([][]string, error) {
	off := int(offset)
	if off < 0 || off >= len(x.data) {
		return nil, errors.New("sheet offset outside the workbook stream")
	}
	typ, _, next, ok := x.record(off)
	if !ok || (typ != 0x0809 && typ != 0x0409) {
		return nil, errors.New("sheet does not start with a BOF record")
	}
	off = next
	var grid [][]string
	ncells, slots := 0, 0
	truncated := false
	set := func(r, c int, v string) {
		if v == "" {
			return
		}
		if r >= xlsMaxRows || c >= xlsMaxCols || ncells >= xlsMaxCells || (r < len(grid) && c >= len(grid[r]) && slots+c+1-len(grid[r]) > xlsMaxSlots) ||
			(r >= len(grid) && slots+c+1 > xlsMaxSlots) {
			truncated = true
			return
		}
		for len(grid) <= r {
			grid = append(grid, nil)
		}
		row := grid[r]
		slots += max(0, c+1-len(row))
		for len(row) <= c {
			row = append(row, "")
		}
		if row[c] == "" {
			ncells++
		}
		row[c] = v
		grid[r] = row
	}
	get := func(r, c int) string {
		if r < len(grid) && c < len(grid[r]) {
			return grid[r][c]
		}
		return ""
	}
	var merges [][4]int
	type note struct {
		r, c   int
		id     uint16
		author string
	}
	var notes []note
	texts := map[uint16]string{} // drawing object id → its text box (TXO) text
	var curObj uint16
	pendR, pendC := -1, -1 // a formula whose string result follows in a STRING record
	le := binary.LittleEndian
	for count := 0; ; count++ {
		if count&4095 == 0 && x.ctx.Err() != nil {
			return nil, x.ctx.Err()
		}
		typ, b, nx, ok := x.record(off)
		if !ok {
			break
		}
		off = nx
		if typ == 0x000A { // EOF
			break
		}
		if typ == 0x0809 { // an embedded substream (chart): skip to its EOF
			for {
				t, _, n2, ok := x.record(off)
				off = n2
				if !ok || t == 0x000A {
					break
				}
			}
			continue
		}
		switch typ {
		case 0x005D: // OBJ: its first subrecord (ftCmo) names the object
			if len(b) >= 8 && le.Uint16(b) == 0x15 {
				curObj = le.Uint16(b[6:])
			}
			continue
		case 0x01B6: // TXO: a comment's text follows in CONTINUE records
			var cch int
			if len(b) >= 12 {
				cch = int(le.Uint16(b[10:]))
			}
			var sb strings.Builder
			got := 0
			for {
				t, cb, n2, ok := x.record(off)
				if !ok || t != 0x003C {
					break
				}
				off = n2
				if got >= cch || len(cb) == 0 {
					continue // the formatting runs
				}
				wide := cb[0]&1 != 0
				cb = cb[1:]
				if wide {
					k := min(cch-got, len(cb)/2)
					sb.WriteString(decodeUTF16LE(cb[:2*k]))
					got += k
				} else {
					k := min(cch-got, len(cb))
					sb.WriteString(latin1(cb[:k]))
					got += k
				}
			}
			texts[curObj] = sb.String()
			continue
		case 0x001C: // NOTE: the cell a comment belongs to, and its author
			if x.biff8 && len(b) >= 8 {
				n := note{r: int(le.Uint16(b)), c: int(le.Uint16(b[2:])), id: le.Uint16(b[6:])}
				if len(b) > 8 {
					n.author, _ = x.unicodeString(b[8:], 2)
				}
				notes = append(notes, n)
			}
			continue
		}
		if len(b) < 6 && typ != 0x00E5 {
			continue
		}
		switch typ {
		case 0x00FD: // LABELSST
			if len(b) >= 10 {
				if i := int(le.Uint32(b[6:])); i < len(x.sst) {
					set(int(le.Uint16(b)), int(le.Uint16(b[2:])), x.sst[i])
				}
			}
		case 0x0204, 0x00D6: // LABEL, RSTRING
			if len(b) >= 8 {
				var s string
				if x.biff8 {
					s, _ = x.unicodeString(b[6:], 2)
				} else {
					n := int(le.Uint16(b[6:]))
					s = x.byteString(b[8:min(len(b), 8+n)])
				}
				set(int(le.Uint16(b)), int(le.Uint16(b[2:])), s)
			}
		case 0x0203: // NUMBER
			if len(b) >= 14 {
				v := math.Float64frombits(le.Uint64(b[6:]))
				set(int(le.Uint16(b)), int(le.Uint16(b[2:])), x.number(v, le.Uint16(b[4:])))
			}
		case 0x027E: // RK
			if len(b) >= 10 {
				set(int(le.Uint16(b)), int(le.Uint16(b[2:])), x.number(rk(le.Uint32(b[6:])), le.Uint16(b[4:])))
			}
		case 0x00BD: // MULRK
			r, c := int(le.Uint16(b)), int(le.Uint16(b[2:]))
			for p := 4; p+6 <= len(b)-2; p += 6 {
				set(r, c, x.number(rk(le.Uint32(b[p+2:])), le.Uint16(b[p:])))
				c++
			}
		case 0x0205: // BOOLERR
			if len(b) >= 8 {
				set(int(le.Uint16(b)), int(le.Uint16(b[2:])), boolErr(b[6], b[7]))
			}
		case 0x0006: // FORMULA: the cached result
			if len(b) >= 14 {
				r, c := int(le.Uint16(b)), int(le.Uint16(b[2:]))
				res := b[6:14]
				if res[6] == 0xFF && res[7] == 0xFF {
					switch res[0] {
					case 0:
						pendR, pendC = r, c
					case 1:
						set(r, c, boolErr(res[2], 0))
					case 2:
						set(r, c, boolErr(res[2], 1))
					}
				} else {
					set(r, c, x.number(math.Float64frombits(le.Uint64(res)), le.Uint16(b[4:])))
				}
			}
		case 0x0207: // STRING (a formula's string result)
			if pendR >= 0 {
				var s string
				if x.biff8 {
					s, _ = x.unicodeString(b, 2)
				} else if len(b) >= 2 {
					s = x.byteString(b[2:min(len(b), 2+int(le.Uint16(b)))])
				}
				set(pendR, pendC, s)
				pendR = -1
			}
		case 0x00E5: // MERGEDCELLS
			if len(b) >= 2 {
				n := int(le.Uint16(b))
				for i := 0; i < n && 2+8*i+8 <= len(b); i++ {
					m := b[2+8*i:]
					merges = append(merges, [4]int{int(le.Uint16(m)), int(le.Uint16(m[2:])), int(le.Uint16(m[4:])), int(le.Uint16(m[6:]))})
				}
			}
		}
	}
	for _, m := range merges {
		r1, r2, c1, c2 := m[0], m[1], m[2], m[3]
		if r2 < r1 || c2 < c1 || r2-r1 > 10000 || c2-c1 > 1000 {
			continue
		}
		v := get(r1, c1)
		if v == "" {
			continue
		}
		for r := r1; r <= r2; r++ {
			for c := c1; c <= c2; c++ {
				set(r, c, v)
			}
		}
	}
	for _, n := range notes {
		text := oneLine(Clean(texts[n.id]))
		if text == "" {
			continue
		}
		who := ""
		if a := oneLine(Clean(n.author)); a != "" {
			who = " (" + a + ")"
			text = strings.TrimSpace(strings.TrimPrefix(text, a+":"))
		}
		cell, _ := excelize.CoordinatesToCellName(n.c+1, n.r+1)
		x.comments = append(x.comments, "> Comment "+cell+escapeInline(who)+": "+escapeInline(text))
	}
	if truncated {
		return grid, errSheetTruncated
	}
	return grid, nil
}

// rk decodes an RK number: a 30-bit integer or the top of a float64, optionally divided by 100.
func rk(v uint32) float64 {
	var f float64
	if v&2 != 0 {
		f = float64(int32(v) >> 2)
	} else {
		f = math.Float64frombits(uint64(v&0xFFFFFFFC) << 32)
	}
	if v&1 != 0 {
		f /= 100
	}
	return f
}

func boolErr(v, isErr byte) string {
	if isErr != 0 {
		switch v {
		case 0x00:
			return "#NULL!"
		case 0x07:
			return "#DIV/0!"
		case 0x0F:
			return "#VALUE!"
		case 0x17:
			return "#REF!"
		case 0x1D:
			return "#NAME?"
		case 0x24:
			return "#NUM!"
		case 0x2A:
			return "#N/A"
		}
		return "#ERROR"
	}
	if v != 0 {
		return "TRUE"
	}
	return "FALSE"
}

// number formats v as its cell's number format (XF index xf) shows it.
func (x *xlsReader) number(v float64, xf uint16) string {
	code := "General"
	var idx uint16
	if int(xf) < len(x.xfs) {
		idx = x.xfs[xf]
		if c, ok := x.formats[idx]; ok {
			code = c
		} else if c, ok := builtinFormats[idx]; ok {
			code = c
		}
	}
	return formatNumber(v, code, x.date1904)
}

// builtinFormats are the number formats Excel does not store, as Japanese Excel shows them.
var builtinFormats = map[uint16]string{
	1: "0", 2: "0.00", 3: "#,##0", 4: "#,##0.00", 9: "0%", 10: "0.00%", 11: "0.00E+00",
	14: "yyyy/m/d", 15: "d-mmm-yy", 16: "d-mmm", 17: "mmm-yy", 18: "h:mm AM/PM", 19: "h:mm:ss AM/PM",
	20: "h:mm", 21: "h:mm:ss", 22: "yyyy/m/d h:mm", 37: "#,##0 ;(#,##0)", 38: "#,##0 ;[Red](#,##0)",
	39: "#,##0.00;(#,##0.00)", 40: "#,##0.00;[Red](#,##0.00)", 45: "mm:ss", 46: "[h]:mm:ss", 47: "mm:ss.0",
	48: "##0.0E+0", 49: "@",
	27: `[$-411]ge.m.d`, 28: `[$-411]ggge"年"m"月"d"日"`, 29: `[$-411]ggge"年"m"月"d"日"`,
	30: "m/d/yy", 31: `yyyy"年"m"月"d"日"`, 32: `h"時"mm"分"`, 33: `h"時"mm"分"ss"秒"`,
	34: `yyyy"年"m"月"`, 35: `m"月"d"日"`, 36: `[$-411]ge.m.d`, 50: `[$-411]ge.m.d`,
	51: `[$-411]ggge"年"m"月"d"日"`, 52: `yyyy"年"m"月"`, 53: `m"月"d"日"`, 54: `[$-411]ggge"年"m"月"d"日"`,
	55: `yyyy"年"m"月"`, 56: `m"月"d"日"`, 57: `[$-411]ge.m.d`, 58: `[$-411]ggge"年"m"月"d"日"`,
}

// formatNumber renders v as number format code would: dates and times through formatDate,
// percentages, fixed decimals and thousands separators; General as the shortest exact form.
func formatNumber(v float64, code string, date1904 bool) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "#NUM!"
	}
	sec := code
	if i := strings.IndexByte(sec, ';'); i >= 0 {
		if v < 0 {
			// the negative section writes its own sign or parentheses; keep it simple: sign
			sec = sec[:i]
		} else {
			sec = sec[:i]
		}
	}
	if strings.EqualFold(strings.TrimSpace(code), "General") || code == "" || code == "@" {
		return general(v)
	}
	plain := stripFormatLiterals(sec)
	if isDateFormat(plain) && v >= 0 && v < 2958466 {
		return formatDate(v, sec, date1904)
	}
	pct := strings.Contains(plain, "%")
	if pct {
		v *= 100
	}
	if strings.ContainsAny(plain, "Ee") && strings.Contains(plain, "0") {
		return strconv.FormatFloat(v, 'E', decimals(plain), 64)
	}
	dec := decimals(plain)
	s := strconv.FormatFloat(math.Abs(v), 'f', dec, 64)
	if strings.Contains(plain, "#,##") || strings.Contains(plain, "0,0") {
		s = thousands(s)
	}
	if v < 0 && s != strings.Repeat("0", len(s)) {
		s = "-" + s
	}
	prefix := ""
	switch {
	case strings.Contains(sec, "¥"), strings.Contains(sec, "\\¥"), strings.Contains(sec, "[$¥"), strings.Contains(sec, "\"￥\""), strings.Contains(sec, "￥"):
		prefix = "¥"
	case strings.Contains(sec, "$") && !strings.Contains(sec, "[$-"):
		prefix = "$"
	}
	if pct {
		s += "%"
	}
	if prefix != "" {
		if strings.HasPrefix(s, "-") {
			return "-" + prefix + s[1:]
		}
		return prefix + s
	}
	return s
}

// general is Excel's General format: up to 15 significant digits, no exponent in common ranges.
func general(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 15, 64), 64)
	if a := math.Abs(r); a != 0 && (a < 1e-9 || a >= 1e15) {
		return strconv.FormatFloat(r, 'G', 15, 64)
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// stripFormatLiterals removes quoted text, escaped characters and [..] sections from a format.
func stripFormatLiterals(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				return b.String()
			}
			i += j + 1
		case '\\', '_', '*':
			i++
		case '[':
			j := strings.IndexByte(s[i:], ']')
			if j < 0 {
				return b.String()
			}
			inner := strings.ToLower(s[i+1 : i+j])
			if inner == "h" || inner == "hh" || inner == "m" || inner == "mm" || inner == "s" || inner == "ss" {
				b.WriteString(inner) // elapsed time
			}
			i += j
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isDateFormat(plain string) bool {
	l := strings.ToLower(plain)
	return strings.ContainsAny(l, "ymdhsge") && !strings.Contains(l, "0e") && !strings.Contains(l, "#")
}

func decimals(plain string) int {
	i := strings.IndexByte(plain, '.')
	if i < 0 {
		return 0
	}
	n := 0
	for _, c := range plain[i+1:] {
		if c == '0' || c == '#' || c == '?' {
			n++
		} else {
			break
		}
	}
	return n
}

func thousands(s string) string {
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		return b.String() + "." + frac
	}
	return b.String()
}

// serialTime turns an Excel date serial into a time (1900 system with its phantom 29 Feb 1900,
// or the 1904 system).
func serialTime(v float64, date1904 bool) time.Time {
	base := time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)
	if date1904 {
		base = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)
	} else if v < 61 {
		base = time.Date(1899, 12, 31, 0, 0, 0, 0, time.UTC)
	}
	days := math.Floor(v)
	ms := math.Round((v - days) * 86400000)
	return base.AddDate(0, 0, int(days)).Add(time.Duration(ms) * time.Millisecond)
}

var eras = []struct {
	name  string
	short string
	start time.Time
}{
	{"令和", "R", time.Date(2019, 5, 1, 0, 0, 0, 0, time.UTC)},
	{"平成", "H", time.Date(1989, 1, 8, 0, 0, 0, 0, time.UTC)},
	{"昭和", "S", time.Date(1926, 12, 25, 0, 0, 0, 0, time.UTC)},
	{"大正", "T", time.Date(1912, 7, 30, 0, 0, 0, 0, time.UTC)},
	{"明治", "M", time.Date(1868, 1, 25, 0, 0, 0, 0, time.UTC)},
}

// formatDate renders the date serial v with a date/time format: y, m (month, or minutes next to
// h or s), d, h, s, AM/PM, Japanese era g/gg/ggg and era year e/ee, aaa/aaaa weekdays, and the
// format's literal text.
func formatDate(v float64, code string, date1904 bool) string {
	t := serialTime(v, date1904)
	era, eraYear := "", t.Year()
	for i, e := range eras {
		if !t.Before(e.start) {
			era = eras[i].name
			eraYear = t.Year() - e.start.Year() + 1
			break
		}
	}
	ampm := strings.Contains(strings.ToUpper(code), "AM/PM")
	var b strings.Builder
	lastHour := false
	lower := strings.ToLower(code)
	for i := 0; i < len(code); {
		c := lower[i]
		run := 1
		for i+run < len(code) && lower[i+run] == c {
			run++
		}
		switch c {
		case '"':
			j := strings.IndexByte(code[i+1:], '"')
			if j < 0 {
				i = len(code)
				continue
			}
			b.WriteString(code[i+1 : i+1+j])
			i += j + 2
			continue
		case '\\':
			if i+1 < len(code) {
				_, n := decodeRune(code[i+1:])
				b.WriteString(code[i+1 : i+1+n])
				i += 1 + n
				continue
			}
		case '[':
			j := strings.IndexByte(code[i:], ']')
			if j < 0 {
				i = len(code)
				continue
			}
			inner := strings.ToLower(code[i+1 : i+j])
			if strings.HasPrefix(inner, "h") {
				fmt.Fprintf(&b, "%d", int(math.Floor(v*24)))
				lastHour = true
			}
			i += j + 1
			continue
		case '_', '*':
			i += 2
			continue
		case 'y':
			if run >= 3 {
				fmt.Fprintf(&b, "%04d", t.Year())
			} else {
				fmt.Fprintf(&b, "%02d", t.Year()%100)
			}
		case 'e':
			if run >= 2 {
				fmt.Fprintf(&b, "%02d", eraYear)
			} else {
				fmt.Fprintf(&b, "%d", eraYear)
			}
		case 'g':
			switch {
			case run >= 3:
				b.WriteString(era)
			case run == 2 && era != "":
				b.WriteString(string([]rune(era)[:1]))
			default:
				for _, e := range eras {
					if e.name == era {
						b.WriteString(e.short)
					}
				}
			}
		case 'm':
			rest := strings.TrimLeft(lower[i+run:], " :.\"")
			minute := lastHour || strings.HasPrefix(rest, "s")
			switch {
			case minute:
				if run >= 2 {
					fmt.Fprintf(&b, "%02d", t.Minute())
				} else {
					fmt.Fprintf(&b, "%d", t.Minute())
				}
			case run >= 4:
				b.WriteString(t.Month().String())
			case run == 3:
				b.WriteString(t.Month().String()[:3])
			case run == 2:
				fmt.Fprintf(&b, "%02d", int(t.Month()))
			default:
				fmt.Fprintf(&b, "%d", int(t.Month()))
			}
		case 'd':
			switch {
			case run >= 4:
				b.WriteString(t.Weekday().String())
			case run == 3:
				b.WriteString(t.Weekday().String()[:3])
			case run == 2:
				fmt.Fprintf(&b, "%02d", t.Day())
			default:
				fmt.Fprintf(&b, "%d", t.Day())
			}
		case 'a':
			if strings.HasPrefix(strings.ToUpper(code[i:]), "AM/PM") {
				if t.Hour() < 12 {
					b.WriteString("AM")
				} else {
					b.WriteString("PM")
				}
				i += 5
				continue
			}
			if run >= 3 {
				wd := []string{"日", "月", "火", "水", "木", "金", "土"}[t.Weekday()]
				if run >= 4 {
					wd += "曜日"
				}
				b.WriteString(wd)
			}
		case 'h':
			h := t.Hour()
			if ampm {
				h %= 12
				if h == 0 {
					h = 12
				}
			}
			if run >= 2 {
				fmt.Fprintf(&b, "%02d", h)
			} else {
				fmt.Fprintf(&b, "%d", h)
			}
			lastHour = true
			i += run
			continue
		case 's':
			if run >= 2 {
				fmt.Fprintf(&b, "%02d", t.Second())
			} else {
				fmt.Fprintf(&b, "%d", t.Second())
			}
		default:
			_, n := decodeRune(code[i:])
			b.WriteString(code[i : i+n])
			i += n
			continue
		}
		if c != 'h' && c != ' ' && c != ':' {
			lastHour = false
		}
		i += run
	}
	return strings.TrimSpace(b.String())
}

func decodeRune(s string) (rune, int) {
	for i, r := range s {
		if i == 0 {
			n := len(string(r))
			return r, n
		}
	}
	return 0, 1
}
