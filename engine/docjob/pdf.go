package docjob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
	"github.com/pdfcpu/pdfcpu/pkg/api"
	pdfcpulib "github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"jobdesk/engine/mdtext"
)

var pdfcpuOnce sync.Once

// pdfcpuConf returns a relaxed pdfcpu configuration that never reads or writes a config folder.
func pdfcpuConf() *model.Configuration {
	pdfcpuOnce.Do(api.DisableConfigDir)
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	return conf
}

// openPDF returns a reader for data, going through pdfcpu when the file is encrypted (decrypting
// files that only have an owner password) or when its cross-reference table is broken. It also
// returns the bytes the reader reads, which OCR needs.
func openPDF(data []byte) (*pdf.Reader, []byte, error) {
	body := fixPDFHeader(data)
	if hasEncrypt(data) {
		var out bytes.Buffer
		err := safeCall(func() error { return api.Decrypt(bytes.NewReader(data), &out, pdfcpuConf()) })
		switch {
		case err == nil:
			body = fixPDFHeader(out.Bytes())
		case isPDFPasswordErr(err):
			return nil, nil, errPassword(KindPDF)
		default:
			// pdfcpu could not decrypt; the reader below still may (older RC4 files), and tells
			// a password from damage.
		}
	}
	if xrefTooLarge(body) {
		// Read through a table rebuilt from the objects found, which ends the file and has
		// no predecessor, never through the file's own.
		rebuilt := rebuildXref(body)
		if rebuilt == nil {
			return nil, nil, errDamaged(KindPDF, errors.New("cross-reference table out of range"))
		}
		r, err := newPDFReader(rebuilt)
		if err != nil {
			return nil, nil, errDamaged(KindPDF, err)
		}
		return r, rebuilt, nil
	}
	r, err := newPDFReader(body)
	if err == nil {
		return r, body, nil
	}
	if isPDFPasswordErr(err) {
		return nil, nil, errPassword(KindPDF)
	}
	// Repair: pdfcpu rebuilds a broken cross-reference table while reading; write it out again.
	var out bytes.Buffer
	rerr := safeCall(func() error {
		ctx, err := api.ReadContext(bytes.NewReader(data), pdfcpuConf())
		if err != nil {
			return err
		}
		return api.WriteContext(ctx, &out)
	})
	if rerr != nil {
		if isPDFPasswordErr(rerr) {
			return nil, nil, errPassword(KindPDF)
		}
		return nil, nil, errDamaged(KindPDF, err)
	}
	body = fixPDFHeader(out.Bytes())
	r, err2 := newPDFReader(body)
	if err2 != nil {
		if isPDFPasswordErr(err2) {
			return nil, nil, errPassword(KindPDF)
		}
		return nil, nil, errDamaged(KindPDF, err)
	}
	return r, body, nil
}

func newPDFReader(b []byte) (r *pdf.Reader, err error) {
	err = safeCall(func() error {
		var e error
		r, e = pdf.NewReader(bytes.NewReader(b), int64(len(b)))
		return e
	})
	if err == nil && r == nil {
		err = errors.New("no reader")
	}
	return r, err
}

// safeCall runs f, turning a panic into an error.
func safeCall(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return f()
}

func hasEncrypt(data []byte) bool {
	return bytes.Contains(data, []byte("/Encrypt"))
}

func isPDFPasswordErr(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, pdfcpulib.ErrWrongPassword) || errors.Is(err, pdfcpulib.ErrOwnerPasswordRequired) ||
		errors.Is(err, pdf.ErrInvalidPassword) {
		return true
	}
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "password")
}

// fixPDFHeader gives the text reader a header it accepts: junk before %PDF- is cut and a PDF 2.0
// version mark is written as 1.7 (same length, so offsets stay right when nothing was cut).
func fixPDFHeader(data []byte) []byte {
	i := bytes.Index(data, []byte("%PDF-"))
	if i < 0 || len(data) < i+10 {
		return data
	}
	h := data[i : i+9]
	if i == 0 && h[5] == '1' && h[7] >= '0' && h[7] <= '7' && (h[8] == '\r' || h[8] == '\n') {
		return data
	}
	if i > 0 {
		return data // offsets would shift; let the repair path rewrite it
	}
	c := bytes.Clone(data)
	copy(c[5:8], "1.7")
	if c[8] != '\r' && c[8] != '\n' {
		c[8] = '\n'
	}
	return c
}

// convertPDF extracts text page by page (each page under its own recover), each page begun by
// a marker line "<!-- Page N -->" (a comment, not a heading: a page is where the paper ends,
// not a part of the document, and a paragraph may run on across it; the window shows the
// markers in the reader's language). Pages with no text are OCRed when tesseract with Japanese
// is installed, and otherwise listed in NoTextPages.
func convertPDF(ctx context.Context, data []byte, opt Options) (*Doc, error) {
	r, body, err := openPDF(data)
	if err != nil {
		return nil, err
	}
	d, failed, err := extractPDF(ctx, r, body, opt)
	if err != nil || len(failed) == 0 {
		return d, err
	}
	// Some pages did not parse: a broken cross-reference table often points them at the wrong
	// offsets. Let pdfcpu rebuild the file and keep that reading if it parses more pages.
	var out bytes.Buffer
	if safeCall(func() error {
		pc, err := api.ReadContext(bytes.NewReader(body), pdfcpuConf())
		if err != nil {
			return err
		}
		return api.WriteContext(pc, &out)
	}) == nil {
		if r2, err := newPDFReader(fixPDFHeader(out.Bytes())); err == nil {
			if d2, failed2, err := extractPDF(ctx, r2, out.Bytes(), opt); err == nil && len(failed2) < len(failed) {
				d, failed = d2, failed2
			}
		}
	}
	// Still some: find every object where it really is and read through a new table.
	if len(failed) > 0 {
		if fixed := rebuildXref(fixPDFHeader(data)); fixed != nil { // the original bytes: a rewrite may have dropped objects
			if r3, err := newPDFReader(fixed); err == nil {
				if d3, failed3, err := extractPDF(ctx, r3, fixed, opt); err == nil && len(failed3) < len(failed) {
					d = d3
				}
			}
		}
	}
	return d, nil
}

var (
	objStart  = regexp.MustCompile(`(?m)^[ \t]*(\d{1,10})[ \t]+(\d{1,5})[ \t]+obj\b`)
	rootRef   = regexp.MustCompile(`/Root[ \t\r\n]*(\d{1,10})[ \t\r\n]+(\d{1,5})[ \t\r\n]+R`)
	infoRef   = regexp.MustCompile(`/Info[ \t\r\n]*(\d{1,10})[ \t\r\n]+(\d{1,5})[ \t\r\n]+R`)
	maxXrefNo = 1 << 20
	// A subsection header of a cross-reference table (first object, count), a table's or
	// cross-reference stream's /Size, and a cross-reference stream's /Index.
	xrefHeaderLine = regexp.MustCompile(`^[ \t]*(\d{1,20})[ \t]+(\d{1,20})[ \t]*\r?$`)
	// objStart for one line (anchored, so a line is not searched past its start).
	objStartLine = regexp.MustCompile(`^[ \t]*(\d{1,10})[ \t]+(\d{1,5})[ \t]+obj\b`)
	xrefSize     = regexp.MustCompile(`/Size[ \t\r\n]*(\d{1,20})`)
	xrefIndex    = regexp.MustCompile(`/Index[ \t\r\n]*\[([\d \t\r\n]{0,1000})\]`)
)

// xrefTooLarge reports whether body's cross-reference data or an object's header names an
// object number or a size beyond maxXrefNo: the reader would make a table that large, and a
// repair walk every number up to it (a damaged or hostile file of a few hundred bytes can ask
// for billions of entries), so its own table is not read.
func xrefTooLarge(body []byte) bool {
	big := func(b []byte) bool {
		n, err := strconv.ParseUint(string(b), 10, 64)
		return err != nil || n > uint64(maxXrefNo)
	}
	// A subsection header and an object's header are whole lines with nothing to search for
	// first, so a pattern over the whole body steps through every byte (a third of a second for
	// a 3.6 MB file). A number beyond maxXrefNo has at least seven digits: only the lines that
	// hold such a run are read, each once.
	for i := 0; i < len(body); {
		if !isASCIIDigit(body[i]) {
			i++
			continue
		}
		j := i
		for j < len(body) && isASCIIDigit(body[j]) {
			j++
		}
		if j-i < 7 {
			i = j
			continue
		}
		start := bytes.LastIndexByte(body[:i], '\n') + 1
		end := len(body)
		if k := bytes.IndexByte(body[j:], '\n'); k >= 0 {
			end = j + k
		}
		// A table's entries ("0001234567 00000 n") end in a letter and hold no "obj": the
		// patterns are tried only on lines that could match them.
		line := body[start:end]
		trimmed := bytes.TrimRight(line, " \t\r")
		if len(trimmed) > 0 && isASCIIDigit(trimmed[len(trimmed)-1]) {
			if m := xrefHeaderLine.FindSubmatch(line); m != nil && (big(m[1]) || big(m[2])) {
				return true
			}
		}
		if bytes.Contains(line, []byte("obj")) {
			if m := objStartLine.FindSubmatch(line); m != nil && big(m[1]) { // an object numbered in the billions: a repair would walk every number
				return true
			}
		}
		i = end
	}
	for _, m := range xrefSize.FindAllSubmatch(body, -1) {
		if big(m[1]) {
			return true
		}
	}
	for _, m := range xrefIndex.FindAllSubmatch(body, -1) {
		for _, f := range bytes.Fields(m[1]) {
			if big(f) {
				return true
			}
		}
	}
	return false
}

func isASCIIDigit(c byte) bool { return '0' <= c && c <= '9' }

// rebuildXref appends a cross-reference table built by finding every "N G obj" in body, for
// files whose own table points at the wrong offsets (a later definition of an object wins, as
// in an incremental update). It returns nil when no object or no /Root is found, or the object
// numbers are implausible.
func rebuildXref(body []byte) []byte {
	type entry struct{ off, gen int }
	objs := map[int]entry{}
	maxNo := 0
	for _, m := range objStart.FindAllSubmatchIndex(body, -1) {
		no, err1 := strconv.Atoi(string(body[m[2]:m[3]]))
		gen, err2 := strconv.Atoi(string(body[m[4]:m[5]]))
		if err1 != nil || err2 != nil || no <= 0 || no >= maxXrefNo {
			continue
		}
		objs[no] = entry{off: m[2], gen: gen}
		maxNo = max(maxNo, no)
	}
	roots := rootRef.FindAllSubmatch(body, -1)
	if len(objs) == 0 || len(roots) == 0 {
		return nil
	}
	root := roots[len(roots)-1]
	var b bytes.Buffer
	b.Grow(len(body) + 20*(maxNo+1) + 128)
	b.Write(body)
	if len(body) > 0 && body[len(body)-1] != '\n' {
		b.WriteByte('\n')
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", maxNo+1)
	for no := 1; no <= maxNo; no++ {
		if e, ok := objs[no]; ok {
			fmt.Fprintf(&b, "%010d %05d n \n", e.off, e.gen)
		} else {
			b.WriteString("0000000000 65535 f \n")
		}
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root %s %s R", maxNo+1, root[1], root[2])
	if infos := infoRef.FindAllSubmatch(body, -1); len(infos) > 0 {
		info := infos[len(infos)-1]
		fmt.Fprintf(&b, " /Info %s %s R", info[1], info[2])
	}
	fmt.Fprintf(&b, " >>\nstartxref\n%d\n%%%%EOF\n", xref)
	return b.Bytes()
}

// extractPDF reads every page of an opened PDF, up to opt's page limit; failed lists pages whose
// content did not parse. Everything is sized by the pages the page tree really holds, never by
// its declared /Count (a 367-byte file can declare a billion pages).
func extractPDF(ctx context.Context, r *pdf.Reader, body []byte, opt Options) (*Doc, []int, error) {
	var declared int
	if err := safeCall(func() error { declared = r.NumPage(); return nil }); err != nil {
		return nil, nil, errDamaged(KindPDF, err)
	}
	limit := opt.maxPages()
	var pages []treePage
	_ = safeCall(func() error { pdfPages(r, limit+1, &pages); return nil })
	n := len(pages)
	if declared > n && declared <= limit {
		// Pages the tree declares but the walk did not find are reported as damaged; a count
		// beyond the limit is not believed.
		n = declared
	}
	if n <= 0 {
		return nil, nil, errDamaged(KindPDF, reason("the document has no pages"))
	}
	d := &Doc{Kind: KindPDF, Pages: n, Method: MethodNative}
	if n > limit {
		n, d.Pages, d.PageLimit = limit, limit, limit
		pages = pages[:limit]
	}
	var b strings.Builder
	var failed []int
	texts := make([]string, n)
	var empty, truncated []int
	var unreadable []UnreadablePage
	fonts := fontCache{}
	var annots annotClock
	// Progress: reading the text layer takes the bar to 90 %; where OCR may run (it takes a
	// few seconds a page, reading text milliseconds), to 10 %, and OCR the rest.
	ocrFrom := 90.0
	if !opt.NoOCR {
		if ok, _ := OCRAvailable(); ok {
			ocrFrom = 10
		}
	}
	for i := 1; i <= n; i++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		var text string
		perr := safeCall(func() error {
			// Only pages the bounded walk found are read: the reader's own lookup loops for ever
			// on a page tree that contains itself.
			var p treePage
			if i <= len(pages) {
				p = pages[i-1]
			}
			if p.V.IsNull() {
				return errors.New("missing page object")
			}
			spans, err := pageSpansIn(ctx, p.Page, p.res, fonts, &annots)
			if errors.Is(err, errPageTooLarge) {
				truncated = append(truncated, i)
				err = nil
			}
			if err != nil {
				return err
			}
			if box, ok := p.pageBox(); ok {
				spans = offPage(spans, box)
			}
			bad, kept, dropped := unreadableFonts(spans)
			spans = kept
			if len(bad) > 0 {
				unreadable = append(unreadable, UnreadablePage{Page: i, Fonts: bad, dropped: dropped})
			}
			text = logicalOrder(layoutText(spans))
			return nil
		})
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if perr != nil {
			failed = append(failed, i)
			text = ""
		}
		text = pageText(text)
		texts[i-1] = text
		if text == "" && perr == nil && unreadableOn(unreadable, i) == nil {
			empty = append(empty, i)
		}
		if opt.Progress != nil && (i%8 == 0 || i == n) {
			opt.Progress(float64(i)*ocrFrom/float64(n), fmt.Sprintf("page %d of %d", i, n))
		}
	}
	if (len(empty) > 0 || len(unreadable) > 0) && !opt.NoOCR {
		if ok, _ := OCRAvailable(); ok {
			want := append([]int(nil), empty...)
			for _, u := range unreadable {
				if u.dropped { // a page with holes only keeps its own text: OCR may know its script less well
					want = append(want, u.Page)
				}
			}
			ocr := ocrPages(ctx, body, want, func(done, total int) {
				if opt.Progress != nil {
					opt.Progress(ocrFrom+(99-ocrFrom)*float64(done)/float64(total), fmt.Sprintf("OCR: page %d of %d", done, total))
				}
			})
			var still []int
			for _, p := range empty {
				if t := pageText(normalizeOCR(ocr[p])); t != "" {
					texts[p-1] = t
					d.OCRPages = append(d.OCRPages, p)
				} else {
					still = append(still, p)
				}
			}
			empty = still
			// A page whose text layer is unreadable is read from its image instead: OCR is
			// checked against the original, garbled text never is.
			for k, u := range unreadable {
				if t := pageText(normalizeOCR(ocr[u.Page])); t != "" && u.dropped {
					texts[u.Page-1] = t
					unreadable[k].OCR = true
					d.OCRPages = append(d.OCRPages, u.Page)
				}
			}
			slices.Sort(d.OCRPages)
		} else {
			d.Notes = append(d.Notes, "OCR is not available (install tesseract-ocr and tesseract-ocr-jpn to read scanned pages)")
		}
	}
	d.UnreadablePages = unreadable
	for i, t := range texts {
		fmt.Fprintf(&b, "<!-- Page %d -->\n\n", i+1)
		if t == "" && containsInt(failed, i+1) {
			b.WriteString("> (this page is damaged and could not be read)\n\n")
			continue
		}
		u := unreadableOn(unreadable, i+1)
		if u != nil && !u.OCR {
			fmt.Fprintf(&b, "> (characters in %s on this page could not be decoded and are left out / このページの %s の文字は読み取れないため省きました)\n\n",
				strings.Join(u.Fonts, ", "), strings.Join(u.Fonts, "、"))
			if t == "" {
				continue
			}
		}
		if t == "" {
			b.WriteString("> (no text layer)\n\n")
			continue
		}
		if containsInt(d.OCRPages, i+1) {
			b.WriteString(ocrNote + "\n\n")
		}
		b.WriteString(unmarked(t))
		b.WriteString("\n\n")
	}
	d.TruncatedPages = truncated
	d.Markdown = b.String()
	d.NoTextPages = empty
	switch {
	case len(empty) > 0 || len(failed) > 0 || len(truncated) > 0 || d.PageLimit > 0 || len(unreadable) > 0:
		d.Method = MethodPartial
	case len(d.OCRPages) > 0:
		d.Method = MethodOCR
	}
	if len(failed) > 0 {
		d.DamagedPages = failed
	}
	return d, failed, nil
}

// treePage is a page found in the page tree with the resources and the media box it inherits
// from its ancestors, or has itself (Null when none has any).
type treePage struct {
	pdf.Page
	res, media pdf.Value
}

// inherited is what a node of the page tree passes down to its pages.
type inherited struct{ res, media pdf.Value }

// pageBox is the page's media box in default user space, its corners in order; ok is false
// when the page has no usable one. (Not the crop box: text a crop box hides is still the
// document's, and pdftotext reads it too.)
func (p treePage) pageBox() (box [4]float64, ok bool) {
	v := p.media
	if v.Kind() != pdf.Array || v.Len() != 4 {
		return box, false
	}
	for i := range box {
		box[i] = v.Index(i).Float64()
		if math.IsNaN(box[i]) || math.IsInf(box[i], 0) {
			return box, false
		}
	}
	box[0], box[2] = min(box[0], box[2]), max(box[0], box[2])
	box[1], box[3] = min(box[1], box[3]), max(box[1], box[3])
	return box, box[2]-box[0] >= 1 && box[3]-box[1] >= 1
}

// offPage returns spans without the strings that lie wholly outside box, a size of theirs
// away from it at least: a printer's slug (the job's name and time set beyond the sheet) or
// text pushed off the page, which no viewer shows (pdftotext leaves it out too). Invisible
// text on the page (an OCR'd scan's text layer) stays.
func offPage(spans []span, box [4]float64) []span {
	var out []span
	for i, s := range spans {
		off := false
		if !math.IsNaN(s.x) && !math.IsNaN(s.y) {
			m := max(s.size, 0)
			if math.IsInf(m, 0) {
				m = 0
			}
			x0, x1 := s.x, s.end
			if math.IsNaN(x1) {
				x1 = x0
			}
			y0, y1 := s.y, s.vend
			if math.IsNaN(y1) {
				y1 = y0
			}
			x0, x1 = min(x0, x1), max(x0, x1)
			y0, y1 = min(y0, y1), max(y0, y1)
			off = x1 < box[0]-m || x0 > box[2]+m || y1 < box[1]-m || y0 > box[3]+m
		}
		if off && out == nil {
			out = append(make([]span, 0, len(spans)), spans[:i]...)
		}
		if !off && out != nil {
			out = append(out, s)
		}
	}
	if out == nil {
		return spans
	}
	return out
}

// pdfPages appends the document's pages to out in order, walking the page tree once: the
// reader's Page(i) walks it from the root for every page, which made a 240-page file quadratic.
// Each node is read once, and the resources a node passes down are carried along the walk
// rather than looked up through each page's /Parent (which reads the parent, with its array of
// tens of thousands of kids, again for every page). It stops after max pages or 4×max+1024
// tree nodes (a cyclic tree); a node that cannot be read stands for one missing page.
func pdfPages(r *pdf.Reader, max int, out *[]treePage) {
	budget := 4*max + 1024
	var walk func(v pdf.Value, in inherited, depth int)
	walk = func(v pdf.Value, in inherited, depth int) {
		budget--
		if depth > 64 || budget < 0 || len(*out) >= max {
			return
		}
		defer func() {
			if recover() != nil && len(*out) < max {
				// A damaged node: its page (one, as far as can be told) is missing, and the
				// pages after it keep their numbers.
				*out = append(*out, treePage{})
			}
		}()
		if res := v.Key("Resources"); res.Kind() == pdf.Dict {
			in.res = res
		}
		if b := v.Key("MediaBox"); b.Kind() == pdf.Array {
			in.media = b
		}
		switch v.Key("Type").Name() {
		case "Pages":
			kids := v.Key("Kids")
			for i := 0; i < kids.Len() && len(*out) < max && budget >= 0; i++ {
				walk(kids.Index(i), in, depth+1)
			}
		case "Page":
			*out = append(*out, treePage{Page: pdf.Page{V: v}, res: in.res, media: in.media})
		}
	}
	walk(r.Trailer().Key("Root").Key("Pages"), inherited{}, 0)
}

// unmarked is a page's text with any line that reads as a page marker escaped ("&lt;!-- Page
// 3 -->", shown as written), so the page's own words never begin a page.
func unmarked(t string) string {
	if !strings.Contains(t, "<!-- Page ") {
		return t
	}
	lines := strings.Split(t, "\n")
	for i, l := range lines {
		if mdtext.PageMarker.MatchString(l) {
			lines[i] = "&lt;" + l[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// pageText cleans one page's raw text: normalised characters, trimmed lines, at most one blank
// line in a row.
func pageText(raw string) string {
	s := Clean(raw)
	lines := strings.Split(s, "\n")
	out := lines[:0]
	blank := true
	for _, l := range lines {
		l = strings.TrimRight(strings.TrimLeft(l, " \t"), " \t")
		if l == "" {
			if !blank {
				out = append(out, "")
			}
			blank = true
			continue
		}
		blank = false
		if n := len(out); n > 0 && out[n-1] != "" {
			if joined, rest, ok := dehyphenate(out[n-1], l); ok {
				out[n-1] = joined
				if l = rest; l == "" {
					continue
				}
			}
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// dehyphenate joins a word broken at the end of line prev ("self-" then "publishing, …" on
// next), as pdftotext does: when prev ends in a hyphen after two letters, the last lowercase,
// and next starts with a lowercase letter, the hyphen goes and next's first word moves up to
// prev. ok is false when the lines are no such pair.
func dehyphenate(prev, next string) (joined, rest string, ok bool) {
	if !strings.HasSuffix(prev, "-") || len(prev) < 3 {
		return "", "", false
	}
	r1, n1 := utf8.DecodeLastRuneInString(prev[:len(prev)-1])
	r2, _ := utf8.DecodeLastRuneInString(prev[:len(prev)-1-n1])
	first, _ := utf8.DecodeRuneInString(next)
	if !unicode.IsLower(r1) || !unicode.IsLetter(r2) || !unicode.IsLower(first) {
		return "", "", false
	}
	word, after, _ := strings.Cut(next, " ")
	return prev[:len(prev)-1] + word, strings.TrimLeft(after, " "), true
}

// OCRAvailable reports whether scanned pages can be read: the tesseract command with the jpn
// language (ImageOCRAvailable) and poppler's pdftoppm (to render a page) must both be
// installed. reason says what is missing.
func OCRAvailable() (ok bool, reason string) { return pdfOCRCheck() }

var pdfOCRCheck = sync.OnceValues(func() (bool, string) {
	if _, err := exec.LookPath("tesseract"); err != nil {
		return false, "the tesseract command is not installed"
	}
	if _, err := exec.LookPath("pdftoppm"); err != nil {
		return false, "pdftoppm (poppler-utils) is not installed"
	}
	return ImageOCRAvailable()
})

// ocrPages renders each listed page with pdftoppm and reads it with tesseract (jpn+eng), the
// pages in parallel, as many at a time as the machine has cores (each tesseract on one thread,
// so they do not crowd each other out). progress, when set, is told each page done (done of
// total), from one goroutine at a time.
func ocrPages(ctx context.Context, body []byte, pages []int, progress func(done, total int)) map[int]string {
	res := map[int]string{}
	dir, err := os.MkdirTemp("", "jobdesk-ocr-")
	if err != nil {
		return res
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "in.pdf")
	if os.WriteFile(in, body, 0o600) != nil {
		return res
	}
	workers := min(runtime.NumCPU(), len(pages))
	var mu sync.Mutex
	done := 0
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				text, ok := ocrPage(ctx, dir, in, p)
				mu.Lock()
				if ok {
					res[p] = text
				}
				done++
				if progress != nil {
					progress(done, len(pages))
				}
				mu.Unlock()
			}
		}()
	}
	for _, p := range pages {
		if ctx.Err() != nil {
			break
		}
		next <- p
	}
	close(next)
	wg.Wait()
	return res
}

// ocrPage renders page p of the PDF at in into dir and reads it.
func ocrPage(ctx context.Context, dir, in string, p int) (string, bool) {
	prefix := filepath.Join(dir, fmt.Sprintf("p%d", p))
	ps := fmt.Sprint(p)
	if err := exec.CommandContext(ctx, "pdftoppm", "-r", "300", "-gray", "-png", "-singlefile", "-f", ps, "-l", ps, in, prefix).Run(); err != nil {
		return "", false
	}
	cmd := exec.CommandContext(ctx, "tesseract", prefix+".png", "stdout", "-l", "jpn+eng")
	cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
	out, err := cmd.Output()
	if err != nil {
		return "", false
	}
	return strings.ReplaceAll(string(out), "\f", ""), true
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// UnreadablePage is a PDF page whose text layer, in the fonts named, is not readable text
// (see pdfplausible.go); OCR: the page was read by OCR instead.
type UnreadablePage struct {
	Page  int      `json:"page"`
	Fonts []string `json:"fonts"`
	OCR   bool     `json:"ocr,omitempty"`
	// dropped: some font's text was left out whole (the page then goes to OCR); else only
	// characters the fonts have no text for were.
	dropped bool
}

func unreadableOn(us []UnreadablePage, page int) *UnreadablePage {
	for i := range us {
		if us[i].Page == page {
			return &us[i]
		}
	}
	return nil
}
