package docjob

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/width"

	"jobdesk/engine/job"
)

// maxXMLPart bounds one uncompressed XML part of a DOCX (declared and while reading), so a small
// package cannot expand into gigabytes.
const maxXMLPart = 64 << 20

// node is a parsed XML element: local name, attributes by local name, children and text.
type node struct {
	name  string
	attr  map[string]string
	kids  []*node
	text  string // character data directly inside (only kept for w:t-like elements)
	space string // namespace URI
	// unclosed is set on the root when the XML ended with elements still open (a cut part)
	unclosed bool
}

func (n *node) a(name string) string { return n.attr[name] }

func (n *node) child(name string) *node {
	for _, k := range n.kids {
		if k.name == name {
			return k
		}
	}
	return nil
}

// parseXML reads r into a tree of nodes. Text is kept for every element (Word puts it only in
// w:t, w:delText and w:instrText). Depth is bounded against hostile nesting.
func parseXML(ctx context.Context, r io.Reader) (*node, error) {
	return streamXML(ctx, r, nil)
}

// streamXML reads r token by token into a tree of nodes like parseXML, and hands each element to
// done as it closes, with its open ancestors (the document root first). When done returns true
// the element is dropped from the tree, so a caller that consumes elements as they close keeps
// only the one being read in memory.
func streamXML(ctx context.Context, r io.Reader, done func(ancestors []*node, n *node) bool) (*node, error) {
	dec := xml.NewDecoder(r)
	dec.Strict = false
	root := &node{name: "#root"}
	stack := []*node{root}
	count := 0
	for {
		tok, err := dec.RawToken()
		if err == io.EOF {
			if len(stack) > 1 {
				root.unclosed = true
			}
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			count++
			if count&4095 == 0 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if len(stack) > 256 {
				return nil, errors.New("XML nested too deeply")
			}
			n := &node{name: t.Name.Local, space: t.Name.Space}
			if len(t.Attr) > 0 {
				n.attr = make(map[string]string, len(t.Attr))
				for _, a := range t.Attr {
					if a.Name.Space == "" {
						n.attr[a.Name.Local] = a.Value
						continue
					}
					// also under prefix:name, where one element carries both id and r:id (the
					// name alone is the attribute without a prefix when there is one)
					n.attr[a.Name.Space+":"+a.Name.Local] = a.Value
					if _, ok := n.attr[a.Name.Local]; !ok || !hasPlainAttr(t.Attr, a.Name.Local) {
						n.attr[a.Name.Local] = a.Value
					}
				}
			}
			p := stack[len(stack)-1]
			p.kids = append(p.kids, n)
			stack = append(stack, n)
		case xml.EndElement:
			if len(stack) > 1 {
				n := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if done != nil && done(stack, n) {
					p := stack[len(stack)-1]
					p.kids[len(p.kids)-1] = nil
					p.kids = p.kids[:len(p.kids)-1]
				}
			}
		case xml.CharData:
			top := stack[len(stack)-1]
			switch top.name {
			case "t", "delText", "instrText", "v", "text", "pt":
				top.text += string(t) // v, pt: chart caches; text: presentation comments
			}
		}
	}
	return root, nil
}

// hasPlainAttr reports whether attrs hold local without a prefix.
func hasPlainAttr(attrs []xml.Attr, local string) bool {
	for _, a := range attrs {
		if a.Name.Space == "" && a.Name.Local == local {
			return true
		}
	}
	return false
}

// zipPart opens a package part by name and parses it, refusing parts whose declared or actual
// size exceeds maxXMLPart. ok is false when the part does not exist.
func zipPart(ctx context.Context, zr *zip.Reader, name string) (*node, bool, error) {
	return zipPartStream(ctx, zr, name, nil)
}

// zipPartStream is zipPart handing each element to done as it closes (see streamXML).
func zipPartStream(ctx context.Context, zr *zip.Reader, name string, done func([]*node, *node) bool) (*node, bool, error) {
	for _, f := range zr.File {
		if f.Name != name {
			continue
		}
		if f.Flags&1 != 0 {
			return nil, true, errPassword(KindDOCX)
		}
		if f.UncompressedSize64 > maxXMLPart {
			return nil, true, errTooLarge("part "+name, "文書内のパーツ "+name+" ", int64(f.UncompressedSize64), maxXMLPart)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, true, err
		}
		defer rc.Close()
		lr := &limitReader{r: rc, n: maxXMLPart}
		n, err := streamXML(ctx, lr, done)
		if lr.over {
			return nil, true, errTooLarge("part "+name, "文書内のパーツ "+name+" ", maxXMLPart+1, maxXMLPart)
		}
		return n, true, err
	}
	return nil, false, nil
}

// limitReader reads at most n bytes and remembers whether the source had more.
type limitReader struct {
	r    io.Reader
	n    int64
	over bool
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		var one [1]byte
		if k, err := l.r.Read(one[:]); k > 0 || (err != nil && err != io.EOF) {
			l.over = true
			return 0, errors.New("size limit exceeded")
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	if l.n <= 0 && err != nil && err != io.EOF {
		// archive/zip reports reading past the declared size as ErrFormat
		l.over = true
	}
	return k, err
}

// docxReader holds what the body needs from the other parts.
type docxReader struct {
	ctx         context.Context
	opt         Options
	headings    map[string]int    // style id → heading level (1–6); Title = 1
	numFmt      map[string]string // numId/ilvl → numFmt ("bullet", "decimal", …)
	footnotes   map[string]string // id → text
	endnotes    map[string]string
	noteOrder   []string // "f:id" / "e:id" in reference order
	counters    map[string]int
	markerWidth map[string]int // numId/ilvl: width of the last marker written at that level, with its space

	levels     map[string]numLevel  // numId/ilvl → the level's format, text and start
	styleNum   map[string][2]string // paragraph style id → numId, ilvl of the numbering it carries
	styleLevel map[string]string    // abstract level linked to a style: numId → style id → ilvl
	titles     map[string]bool      // style ids of the Title style
	hasTitle   bool                 // a paragraph in the Title style was written
	pkg        *opc
	rels       map[string]rel // relationships of the part being rendered
	assets     *assets
	comments   map[string]string // comment id → "author, date: text"
	cmOrder    []string
	after      []string // blocks to write after the current paragraph (charts)
	damaged    bool     // content imported into the document could not be read
}

// numLevel is one level of a numbering definition.
type numLevel struct {
	fmt, text string
	start     int
	style     string // paragraph style linked to the level (headings)
}

// convertDOCX reads WordprocessingML directly: styles for headings, numbering for lists,
// the body with tables, text boxes, ruby and tracked changes, then footnotes and endnotes, and
// headers/footers once each.
func convertDOCX(ctx context.Context, data []byte, opt Options) (*Doc, error) {
	if isEncryptedOLE(data) {
		return nil, errPassword(KindDOCX)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if zr == nil {
		return nil, errDamaged(KindDOCX, err)
	}
	dr := &docxReader{ctx: ctx, opt: opt, headings: map[string]int{}, numFmt: map[string]string{},
		footnotes: map[string]string{}, endnotes: map[string]string{}, counters: map[string]int{},
		markerWidth: map[string]int{}, levels: map[string]numLevel{}, styleNum: map[string][2]string{},
		titles: map[string]bool{}, comments: map[string]string{}, assets: &assets{dir: opt.assetDir, off: opt.noAssets}}
	dr.pkg, _ = newOPC(ctx, KindDOCX, data)
	wrap := func(err error) error {
		var je *job.Error
		if errors.As(err, &je) {
			return je
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errDamaged(KindDOCX, err)
	}
	if st, ok, err := zipPart(ctx, zr, "word/styles.xml"); err != nil {
		return nil, wrap(err)
	} else if ok {
		dr.readStyles(st)
	}
	if nb, ok, err := zipPart(ctx, zr, "word/numbering.xml"); err != nil {
		return nil, wrap(err)
	} else if ok {
		dr.readNumbering(nb)
	}
	for _, part := range []struct {
		name string
		into map[string]string
		tag  string
	}{{"word/footnotes.xml", dr.footnotes, "footnote"}, {"word/endnotes.xml", dr.endnotes, "endnote"}} {
		n, ok, err := zipPart(ctx, zr, part.name)
		if err != nil {
			return nil, wrap(err)
		}
		if ok {
			dr.readNotes(n, part.tag, part.into)
		}
	}
	if n, ok, err := zipPart(ctx, zr, "word/comments.xml"); err != nil {
		return nil, wrap(err)
	} else if ok {
		dr.readComments(n)
	}
	var headers, footers []string
	var names []string
	for _, f := range zr.File {
		if strings.HasPrefix(f.Name, "word/header") || strings.HasPrefix(f.Name, "word/footer") {
			names = append(names, f.Name)
		}
	}
	sort.Strings(names)
	seen := map[string]bool{}
	for _, name := range names {
		n, _, err := zipPart(ctx, zr, name)
		if err != nil {
			return nil, wrap(err)
		}
		dr.setPart(name)
		t := strings.TrimSpace(dr.blocksText(n))
		dr.after = dr.after[:0] // a header's chart is not carried into the body
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		if strings.HasPrefix(name, "word/header") {
			headers = append(headers, t)
		} else {
			footers = append(footers, t)
		}
	}
	var b strings.Builder
	for _, h := range headers {
		b.WriteString("> Header: " + oneLine(h) + "\n\n")
	}
	dr.setPart("word/document.xml")
	dr.after = dr.after[:0]
	// The body is rendered block by block as each closes (a paragraph, a table, a content
	// control), so a document.xml of tens of MB never stands in memory as one tree.
	_, ok, err := zipPartStream(ctx, zr, "word/document.xml", func(anc []*node, n *node) bool {
		if len(anc) != 3 || anc[1].name != "document" || anc[2].name != "body" {
			return false
		}
		dr.blocks(&b, []*node{n})
		return true
	})
	if err != nil {
		return nil, wrap(err)
	}
	if !ok {
		return nil, errDamaged(KindDOCX, reason("the document part (word/document.xml) is missing"))
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if len(dr.noteOrder) > 0 {
		b.WriteString("\n")
		for _, k := range dr.noteOrder {
			kind, id, _ := strings.Cut(k, ":")
			txt := dr.footnotes[id]
			label := "^" + id
			if kind == "e" {
				txt = dr.endnotes[id]
				label = "^e" + id
			}
			fmt.Fprintf(&b, "[%s]: %s\n", label, oneLine(txt))
		}
	}
	if len(dr.cmOrder) > 0 {
		b.WriteString("\n### Comments\n\n")
		for _, id := range dr.cmOrder {
			if c := dr.comments[id]; c != "" {
				b.WriteString("> Comment " + c + "\n\n")
			}
		}
	}
	for _, f := range footers {
		b.WriteString("\n> Footer: " + oneLine(f) + "\n")
	}
	md := strings.TrimSpace(Clean(dr.headingMarks(b.String())))
	if md != "" {
		md += "\n"
	}
	d := &Doc{Kind: KindDOCX, Markdown: md, Pages: 1, Method: MethodNative, Assets: dr.assets.files}
	if dr.damaged {
		d.DamagedPages = []int{1}
	}
	return d, nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

func (dr *docxReader) readStyles(root *node) {
	st := root.child("styles")
	if st == nil {
		return
	}
	outline := map[string]int{}    // style id → its own w:outlineLvl
	basedOn := map[string]string{} // style id → the style it is based on (styles not yet headings)
	for _, s := range st.kids {
		if s.name != "style" || s.a("type") != "paragraph" {
			continue
		}
		id := s.a("styleId")
		name := ""
		if n := s.child("name"); n != nil {
			name = strings.ToLower(n.a("val"))
		}
		lvl := 0
		if strings.HasPrefix(name, "heading ") {
			// "heading 2", also a variant named after it ("heading 2 invisible num")
			lvl = leadingInt(strings.TrimPrefix(name, "heading "))
		} else if name == "title" {
			lvl = 1
		}
		if lvl == 0 {
			if ppr := s.child("pPr"); ppr != nil {
				if o := ppr.child("outlineLvl"); o != nil {
					if v, err := strconv.Atoi(o.a("val")); err == nil {
						outline[id] = v
					}
				}
			}
			if bo := s.child("basedOn"); bo != nil {
				basedOn[id] = bo.a("val")
			}
		}
		if v, ok := outline[id]; ok && v < 9 {
			lvl = v + 1
		}
		if name == "title" {
			dr.titles[id] = true
		}
		if ppr := s.child("pPr"); ppr != nil {
			if np := ppr.child("numPr"); np != nil {
				var num, il string
				if x := np.child("numId"); x != nil {
					num = x.a("val")
				}
				if x := np.child("ilvl"); x != nil {
					il = x.a("val")
				}
				if num != "" {
					dr.styleNum[id] = [2]string{num, il}
				}
			}
		}
		if lvl == 0 && strings.HasPrefix(strings.ToLower(id), "heading") {
			lvl, _ = strconv.Atoi(strings.TrimPrefix(strings.ToLower(id), "heading"))
		}
		if lvl > 0 {
			if lvl > 6 {
				lvl = 6
			}
			dr.headings[id] = lvl
		}
	}
	// A style based on a heading is a heading of that level (Word shows it in the outline)
	// unless it sets an outline level of its own ("TOC Heading": body text).
	for id, base := range basedOn {
		if _, own := outline[id]; own || dr.headings[id] > 0 {
			continue
		}
		for i := 0; i < 16 && base != ""; i++ {
			if l := dr.headings[base]; l > 0 {
				if !dr.titles[base] {
					dr.headings[id] = l
				}
				break
			}
			if _, own := outline[base]; own {
				break
			}
			base = basedOn[base]
		}
	}
}

// leadingInt is the number s starts with (0 when none).
func leadingInt(s string) int {
	n := 0
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1000; i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

func (dr *docxReader) readNumbering(root *node) {
	nb := root.child("numbering")
	if nb == nil {
		return
	}
	abs := map[string]map[string]numLevel{}
	for _, a := range nb.kids {
		if a.name != "abstractNum" {
			continue
		}
		lv := map[string]numLevel{}
		for _, l := range a.kids {
			if l.name == "lvl" {
				lv[l.a("ilvl")] = readLevel(l, numLevel{start: 1})
			}
		}
		abs[a.a("abstractNumId")] = lv
	}
	dr.styleLevel = map[string]string{}
	for _, n := range nb.kids {
		if n.name != "num" {
			continue
		}
		id := n.a("numId")
		if an := n.child("abstractNumId"); an != nil {
			for ilvl, l := range abs[an.a("val")] {
				dr.levels[id+"/"+ilvl] = l
				dr.numFmt[id+"/"+ilvl] = l.fmt
				if l.style != "" {
					dr.styleLevel[id+"/"+l.style] = ilvl
				}
			}
		}
		for _, o := range n.kids {
			if o.name != "lvlOverride" {
				continue
			}
			key := id + "/" + o.a("ilvl")
			l := dr.levels[key]
			if so := o.child("startOverride"); so != nil {
				if v, err := strconv.Atoi(so.a("val")); err == nil {
					l.start = v
				}
			}
			if lv := o.child("lvl"); lv != nil {
				l = readLevel(lv, l)
			}
			dr.levels[key] = l
			dr.numFmt[key] = l.fmt
		}
	}
}

// readLevel reads a w:lvl over the level def.
func readLevel(l *node, def numLevel) numLevel {
	if f := l.child("numFmt"); f != nil {
		def.fmt = f.a("val")
	}
	if t := l.child("lvlText"); t != nil {
		def.text = t.a("val")
	}
	if st := l.child("start"); st != nil {
		if v, err := strconv.Atoi(st.a("val")); err == nil {
			def.start = v
		}
	}
	if ps := l.child("pStyle"); ps != nil {
		def.style = ps.a("val")
	}
	return def
}

func (dr *docxReader) readNotes(root *node, tag string, into map[string]string) {
	var top *node
	for _, k := range root.kids {
		top = k
	}
	if top == nil {
		return
	}
	for _, n := range top.kids {
		if n.name != tag {
			continue
		}
		if t := n.a("type"); t == "separator" || t == "continuationSeparator" {
			continue
		}
		into[n.a("id")] = strings.TrimSpace(dr.blocksText(n))
	}
}

// blocksText renders the block content of n as plain lines (headers, footers, notes, cells).
func (dr *docxReader) blocksText(n *node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	var walk func(ks []*node)
	walk = func(ks []*node) {
		for _, k := range ks {
			switch k.name {
			case "p":
				t, boxes := dr.paraText(k)
				before, t, after := pictureLines(t)
				for _, pic := range before {
					b.WriteString(pic + "\n")
				}
				if t = strings.TrimSpace(t); t != "" {
					b.WriteString(dr.itemPrefix(k) + t + "\n")
				}
				for _, pic := range after {
					b.WriteString(pic + "\n")
				}
				for _, bx := range boxes {
					walk(bx.kids)
				}
			case "tbl":
				for _, row := range k.kids {
					if row.name == "tr" {
						var cells []string
						for _, c := range row.kids {
							if c.name == "tc" {
								cells = append(cells, strings.TrimSpace(oneLine(dr.blocksText(c))))
							}
						}
						b.WriteString(strings.Join(cells, " ") + "\n")
					}
				}
			case "sdt", "sdtContent", "customXml", "ins", "moveTo", "hdr", "ftr", "footnote", "endnote", "body", "document":
				walk(k.kids)
			}
		}
	}
	walk(n.kids)
	return b.String()
}

// blocks renders body-level content as Markdown.
func (dr *docxReader) blocks(b *strings.Builder, ks []*node) {
	for _, k := range ks {
		if dr.ctx.Err() != nil {
			return
		}
		switch k.name {
		case "p":
			dr.para(b, k)
		case "tbl":
			dr.table(b, k)
		case "altChunk":
			dr.altChunk(b, k)
		case "sdt", "sdtContent", "customXml", "ins", "moveTo", "smartTag":
			dr.blocks(b, k.kids)
		}
	}
}

// altChunk renders content imported into the document as a part of another format (w:altChunk:
// HTML, MHTML, plain text or a Word document), which Word shows in place.
func (dr *docxReader) altChunk(b *strings.Builder, k *node) {
	if dr.pkg == nil {
		return
	}
	r, ok := dr.rels[relID(k, "id")]
	if !ok || r.external {
		return
	}
	data, ok, err := dr.pkg.raw(r.target, maxXMLPart)
	unread := func(why error) {
		// the document holds content this conversion does not give: it says so, and is partial
		logDetail(KindDOCX, fmt.Sprintf("imported part %s: %v", r.target, why))
		b.WriteString("> (imported content that could not be read / 読み取れなかった取り込み部分: " + escapeInline(path.Base(r.target)) + ")\n\n")
		dr.damaged = true
	}
	if !ok || err != nil {
		if err == nil {
			err = errors.New("the part is missing")
		}
		unread(err)
		return
	}
	md, read := "", false
	switch strings.ToLower(path.Ext(r.target)) {
	case ".htm", ".html", ".xhtml":
		var s string
		if s, _, read = decodeHTML(data); read {
			md = htmlMarkdown(s, false)
		}
	case ".mht", ".mhtml":
		if d, err := convertMHTML(data); err == nil {
			md, read = d.Markdown, true
		}
	case ".txt":
		if read = utf8.Valid(data); read {
			md = EscapeMarkdown(Clean(string(data)))
		}
	case ".docx":
		if dr.opt.depth < MaxZipDepth {
			opt := dr.opt
			opt.depth++
			opt.noAssets = true // its pictures are not written: their alt text stands in
			if d, err := convertDOCX(dr.ctx, data, opt); err == nil {
				md, read = d.Markdown, true
				dr.damaged = dr.damaged || len(d.DamagedPages) > 0
			}
		}
	}
	if !read {
		unread(errors.New("a format or encoding that is not read, or damaged"))
		return
	}
	if md = strings.TrimSpace(md); md != "" {
		b.WriteString(md + "\n\n")
	}
}

func (dr *docxReader) para(b *strings.Builder, p *node) {
	text, boxes := dr.paraText(p)
	picsBefore, text, picsAfter := pictureLines(text)
	if strings.TrimSpace(text) == "" && len(picsBefore)+len(picsAfter) > 0 && dr.numbered(p) {
		// a list item holding only pictures keeps them as its text, so it keeps its number
		text = strings.Join(append(picsBefore, picsAfter...), " ")
		picsBefore, picsAfter = nil, nil
	}
	for _, pic := range picsBefore {
		b.WriteString(pic + "\n\n")
	}
	text = strings.TrimSpace(checkboxes.Replace(text))
	if m := mathOnly.FindAllString(text, -1); m != nil && strings.TrimSpace(mathOnly.ReplaceAllString(text, "")) == "" && !strings.HasPrefix(text, "$$") {
		// a paragraph of equations only: each is a display equation
		for i := range m {
			m[i] = "$" + strings.TrimSpace(m[i]) + "$"
		}
		text = strings.Join(m, "\n\n")
	}
	prefix := ""
	style, numID, ilvl := "", "", ""
	hl := 0
	title := false
	ppr := p.child("pPr")
	if ppr != nil {
		if ps := ppr.child("pStyle"); ps != nil {
			style = ps.a("val")
			hl = dr.headings[style]
			title = dr.titles[style]
		}
		if hl == 0 {
			if o := ppr.child("outlineLvl"); o != nil {
				if v, err := strconv.Atoi(o.a("val")); err == nil && v < 6 {
					hl = v + 1
				}
			}
		}
		if np := ppr.child("numPr"); np != nil {
			if x := np.child("ilvl"); x != nil {
				ilvl = x.a("val")
			}
			if x := np.child("numId"); x != nil {
				numID = x.a("val")
			}
		}
	}
	numID, depth, label, numbered := dr.numberOf(numID, ilvl, style, text != "")
	key := numID + "/" + strconv.Itoa(depth)
	switch {
	case title:
		dr.hasTitle = true
		prefix = "\x00T\x00"
	case hl > 0:
		prefix = "\x00H" + strconv.Itoa(hl) + "\x00"
		if label != "" {
			prefix += label + " "
		}
	case numID != "" && numID != "0" && text != "" && dr.levels[key].fmt == "none":
		// a level numbered "none" shows no marker, only its fixed text when it has one
		if t := dr.levels[key].text; t != "" && !strings.Contains(t, "%") {
			text = escapeInline(t) + " " + text
		}
	case numID != "" && numID != "0" && text != "":
		marker := "-"
		if numbered {
			if isListMarker(label) {
				marker = label
			} else if label != "" {
				marker = "- " + label
			}
		}
		// A nested item is indented to where its parent's text starts (the width of the
		// parent's marker and space: 2 under "- ", 3 under "1. ", 4 under "10. "), as
		// CommonMark needs.
		indent := 0
		for l := 0; l < depth; l++ {
			w, ok := dr.markerWidth[numID+"/"+strconv.Itoa(l)]
			if !ok {
				w = 2
				if f := dr.numFmt[numID+"/"+strconv.Itoa(l)]; f != "" && f != "bullet" && f != "none" {
					w = 3
				}
			}
			indent += w
		}
		if strings.HasPrefix(marker, "- ") {
			dr.markerWidth[key] = 2
		} else {
			dr.markerWidth[key] = len(marker) + 1
		}
		prefix = strings.Repeat(" ", indent) + marker + " "
	}
	if prefix == "" && (strings.HasPrefix(text, "[x] ") || strings.HasPrefix(text, "[ ] ")) {
		prefix = "- " // a checkbox paragraph is a task list item
	}
	if text != "" {
		if strings.HasPrefix(prefix, "\x00") {
			text = oneLine(text)
		} else if prefix != "" {
			// a list item's text starts where its marker ends: a "1. " or "# " there would
			// open a list or heading inside the item
			text = escapeLineStarts(strings.ReplaceAll(text, "\n", " "))
		} else {
			text = escapeLineStarts(text)
		}
		b.WriteString(prefix + text + "\n\n")
	}
	indent := ""
	if text != "" && prefix != "" && !strings.HasPrefix(prefix, "\x00") {
		// under a list item, its pictures stay in the item (indented to its text)
		indent = strings.Repeat(" ", len(prefix))
	}
	for _, pic := range picsAfter {
		b.WriteString(indent + pic + "\n\n")
	}
	for _, bx := range boxes {
		dr.blocks(b, bx.kids)
	}
	for _, a := range dr.after {
		b.WriteString(a + "\n")
	}
	dr.after = dr.after[:0]
}

// numbered reports whether paragraph p carries list numbering, its own or its style's (headings
// aside).
func (dr *docxReader) numbered(p *node) bool {
	ppr := p.child("pPr")
	if ppr == nil {
		return false
	}
	if np := ppr.child("numPr"); np != nil {
		if x := np.child("numId"); x != nil && x.a("val") != "" && x.a("val") != "0" {
			return true
		}
	}
	if ps := ppr.child("pStyle"); ps != nil && dr.headings[ps.a("val")] == 0 {
		_, ok := dr.styleNum[ps.a("val")]
		return ok
	}
	return false
}

// itemPrefix is the list marker of a paragraph inside a cell, note or header ("- ", "1. ",
// "1.2. "), or "" when it is no list item.
func (dr *docxReader) itemPrefix(p *node) string {
	ppr := p.child("pPr")
	if ppr == nil {
		return ""
	}
	np := ppr.child("numPr")
	if np == nil {
		return ""
	}
	var numID, ilvl string
	if x := np.child("numId"); x != nil {
		numID = x.a("val")
	}
	if x := np.child("ilvl"); x != nil {
		ilvl = x.a("val")
	}
	if numID == "" || numID == "0" {
		return ""
	}
	numID, depth, label, numbered := dr.numberOf(numID, ilvl, "", true)
	if lv := dr.levels[numID+"/"+strconv.Itoa(depth)]; lv.fmt == "none" {
		if lv.text != "" && !strings.Contains(lv.text, "%") {
			return escapeInline(lv.text) + " "
		}
		return ""
	}
	if numbered && label != "" {
		return label + " "
	}
	return "- "
}

// numberOf resolves a paragraph's numbering (its own numId/ilvl, else its style's), advances
// the counters when the paragraph has text, and returns the numbering instance, the level, the
// rendered label ("1.2.") and whether the level is numbered (not a bullet).
func (dr *docxReader) numberOf(numID, ilvl, style string, hasText bool) (string, int, string, bool) {
	if numID == "" && style != "" {
		if sn, ok := dr.styleNum[style]; ok {
			numID = sn[0]
			if ilvl == "" {
				ilvl = sn[1]
			}
		}
	}
	if numID != "" && ilvl == "" {
		ilvl = dr.styleLevel[numID+"/"+style]
	}
	if ilvl == "" {
		ilvl = "0"
	}
	label, numbered := "", false
	depth, _ := strconv.Atoi(ilvl)
	if depth < 0 || depth > 8 {
		depth = 0
	}
	key := numID + "/" + strconv.Itoa(depth)
	if numID != "" && numID != "0" && hasText {
		lv := dr.levels[key]
		if lv.fmt == "" {
			lv.fmt = dr.numFmt[key]
		}
		if lv.fmt != "" && lv.fmt != "bullet" && lv.fmt != "none" {
			numbered = true
			if _, ok := dr.counters[key]; !ok && lv.start > 0 {
				dr.counters[key] = lv.start
			} else {
				dr.counters[key]++
			}
			// a deeper level restarts when a shallower one advances
			for l := depth + 1; l < 9; l++ {
				delete(dr.counters, numID+"/"+strconv.Itoa(l))
			}
			label = dr.levelText(numID, depth, lv)
		}
	}
	return numID, depth, label, numbered
}

// levelText renders a numbering level's text (w:lvlText, "%1.%2." → "1.2."), each %N the
// counter of level N in that level's format; without a text, the list marker of the level.
func (dr *docxReader) levelText(numID string, depth int, lv numLevel) string {
	if lv.text == "" {
		return listMarker(lv.fmt, dr.counters[numID+"/"+strconv.Itoa(depth)])
	}
	var b strings.Builder
	t := lv.text
	for i := 0; i < len(t); i++ {
		if t[i] == '%' && i+1 < len(t) && t[i+1] >= '1' && t[i+1] <= '9' {
			l := int(t[i+1] - '1')
			k := numID + "/" + strconv.Itoa(l)
			n, ok := dr.counters[k]
			if !ok {
				n = max(dr.levels[k].start, 1)
			}
			f := dr.levels[k].fmt
			if l == depth {
				f = lv.fmt
			}
			b.WriteString(strings.TrimSuffix(listMarker(f, n), "."))
			i++
			continue
		}
		b.WriteByte(t[i])
	}
	return strings.TrimSpace(b.String())
}

// isListMarker reports whether s can open a CommonMark ordered list item ("1." or "1)"); a
// letter or roman marker ("a.") is kept as a list item too, as Word shows it.
func isListMarker(s string) bool {
	if len(s) < 2 || (s[len(s)-1] != '.' && s[len(s)-1] != ')') {
		return false
	}
	body := s[:len(s)-1]
	if strings.ContainsAny(body, ".() ") {
		return false
	}
	return len(body) <= 9
}

// headingMarks writes the heading marks para left in md: the Title style is "#", and headings
// move one level down when the document has a title, so "Heading 1" under a title is "##".
func (dr *docxReader) headingMarks(md string) string {
	if !strings.Contains(md, "\x00") {
		return md
	}
	shift := 0
	if dr.hasTitle {
		shift = 1
	}
	pairs := []string{"\x00T\x00", "# "}
	for l := 1; l <= 9; l++ {
		pairs = append(pairs, "\x00H"+strconv.Itoa(l)+"\x00", strings.Repeat("#", min(6, l+shift))+" ")
	}
	return strings.NewReplacer(pairs...).Replace(md)
}

// listMarker is the marker of the n-th item (1-based) of a numbered level in Word's numFmt:
// a. b. … z. aa. for letters, i. ii. for roman numerals, 1. 2. for decimal and every other format.
func listMarker(numFmt string, n int) string {
	if s := eastAsianNumber(numFmt, n); s != "" {
		return s + "."
	}
	switch numFmt {
	case "lowerLetter", "upperLetter":
		s := strings.Repeat(string(rune('a'+(n-1)%26)), (n-1)/26+1)
		if numFmt == "upperLetter" {
			s = strings.ToUpper(s)
		}
		return s + "."
	case "lowerRoman", "upperRoman":
		s := roman(n)
		if numFmt == "lowerRoman" {
			s = strings.ToLower(s)
		}
		return s + "."
	}
	return strconv.Itoa(n) + "."
}

// Japanese numbering sequences Word offers (numFmt aiueo, iroha, ideographTraditional, …).
var (
	aiueoSeq  = []rune("アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワヲン")
	irohaSeq  = []rune("イロハニホヘトチリヌルヲワカヨタレソツネナラムウヰノオクヤマケフコエテアサキユメミシヱヒモセスン")
	jikkanSeq = []rune("甲乙丙丁戊己庚辛壬癸")
	junishi   = []rune("子丑寅卯辰巳午未申酉戌亥")
	kanjiNum  = []rune("〇一二三四五六七八九")
)

// eastAsianNumber writes n in one of Word's Japanese numbering formats as Word shows it
// (一, 十二 for japaneseCounting; ア, イ for aiueo; ① for decimalEnclosedCircle; 01 for
// decimalZero), "" for other formats and numbers a format cannot show. Full-width digits are
// written as digits, which Markdown reads as an ordered list.
func eastAsianNumber(numFmt string, n int) string {
	if n <= 0 {
		return ""
	}
	seq := func(s []rune) string { return string(s[(n-1)%len(s)]) }
	switch numFmt {
	case "decimalZero":
		if n < 10 {
			return "0" + strconv.Itoa(n)
		}
		return strconv.Itoa(n)
	case "decimalEnclosedCircle", "decimalEnclosedCircleChinese":
		switch {
		case n <= 20:
			return string(rune(0x2460 + n - 1))
		case n <= 35:
			return string(rune(0x3251 + n - 21))
		case n <= 50:
			return string(rune(0x32B1 + n - 36))
		}
		return ""
	case "aiueoFullWidth":
		return seq(aiueoSeq)
	case "aiueo":
		return width.Narrow.String(seq(aiueoSeq))
	case "irohaFullWidth":
		return seq(irohaSeq)
	case "iroha":
		return width.Narrow.String(seq(irohaSeq))
	case "ideographTraditional":
		return seq(jikkanSeq)
	case "ideographZodiac":
		return seq(junishi)
	case "ideographDigital":
		var b strings.Builder
		for _, d := range strconv.Itoa(n) {
			b.WriteRune(kanjiNum[d-'0'])
		}
		return b.String()
	case "japaneseCounting", "japaneseDigitalTenThousand", "chineseCounting", "chineseCountingThousand", "taiwaneseCounting", "taiwaneseCountingThousand":
		if n >= 10000 {
			return ""
		}
		var b strings.Builder
		for i, unit := range []string{"千", "百", "十", ""} {
			p := []int{1000, 100, 10, 1}[i]
			d := n / p % 10
			switch {
			case d == 0:
			case d == 1 && unit != "":
				b.WriteString(unit) // 十, not 一十
			default:
				b.WriteString(string(kanjiNum[d]) + unit)
			}
		}
		return b.String()
	}
	return ""
}

// roman writes n (1–3999; others as digits) in roman numerals.
func roman(n int) string {
	if n <= 0 || n >= 4000 {
		return strconv.Itoa(n)
	}
	vals := []int{1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1}
	syms := []string{"M", "CM", "D", "CD", "C", "XC", "L", "XL", "X", "IX", "V", "IV", "I"}
	var b strings.Builder
	for i, v := range vals {
		for n >= v {
			b.WriteString(syms[i])
			n -= v
		}
	}
	return b.String()
}

// paraText returns a paragraph's inline text and the text boxes anchored in it (rendered after
// the paragraph). Deleted runs are dropped, inserted ones kept; mc:Fallback (the VML copy of a
// text box) is skipped so each box appears once; ruby gives its base text (and reading in
// parentheses when Options.Furigana is set).
func (dr *docxReader) paraText(p *node) (string, []*node) {
	var b strings.Builder
	// The document's text is gathered across runs (Word splits "<div>" or "&lt;" anywhere) and
	// escaped as one before any Markdown of the converter's own is written.
	var txt strings.Builder
	flush := func() {
		if txt.Len() > 0 {
			b.WriteString(escapeInline(txt.String()))
			txt.Reset()
		}
	}
	var boxes []*node
	inField := 0
	var fields []*field // the fields open in the paragraph, innermost last
	var walk func(ks []*node)
	walk = func(ks []*node) {
		for _, k := range ks {
			switch k.name {
			case "t":
				if inField == 0 {
					txt.WriteString(k.text)
				}
			case "tab", "ptab":
				txt.WriteByte('\t')
			case "br", "cr":
				if k.a("type") == "" || k.a("type") == "textWrapping" {
					txt.WriteByte('\n')
				}
			case "noBreakHyphen":
				txt.WriteByte('-')
			case "textpath":
				// WordArt drawn in VML (a "社外秘" or "DRAFT" watermark): its text
				if t := strings.TrimSpace(k.a("string")); t != "" && inField == 0 {
					if s := txt.String(); s != "" && !strings.HasSuffix(s, " ") {
						txt.WriteByte(' ')
					}
					txt.WriteString(t + " ")
				}
			case "sym":
				if inField == 0 {
					txt.WriteString(symbolChar(k.a("font"), k.a("char")))
				}
			case "fldChar":
				// a field: its code (begin … separate) is not shown, its result (… end) is; a
				// HYPERLINK field's result links to its address
				switch k.a("fldCharType") {
				case "begin":
					inField++
					fields = append(fields, &field{start: -1})
				case "separate":
					if len(fields) > 0 && !fields[len(fields)-1].separated {
						f := fields[len(fields)-1]
						f.separated = true
						inField--
						if url := hyperlinkInstr(f.instr.String()); url != "" && inField == 0 {
							flush()
							f.link, f.start = url, b.Len()
						}
					}
				case "end":
					if len(fields) > 0 {
						f := fields[len(fields)-1]
						fields = fields[:len(fields)-1]
						if !f.separated {
							inField-- // a field with no result (an index entry)
						}
						if f.start >= 0 && f.start <= b.Len() {
							flush()
							linkFrom(&b, f.start, f.link)
						}
					}
				}
			case "instrText":
				if len(fields) > 0 && !fields[len(fields)-1].separated {
					fields[len(fields)-1].instr.WriteString(k.text)
				}
			case "fldSimple":
				url := hyperlinkInstr(k.a("instr"))
				flush()
				start := b.Len()
				walk(k.kids)
				if url != "" {
					flush()
					linkFrom(&b, start, url)
				}
			case "del", "moveFrom", "delText", "rPr", "pPr", "Fallback", "fallback",
				"commentRangeStart", "commentRangeEnd", "rt":
				// deleted text, field codes, properties, duplicate VML: not content
			case "ruby":
				base := k.child("rubyBase")
				if base != nil {
					walk(base.kids)
				}
				if dr.opt.Furigana {
					if rt := k.child("rt"); rt != nil {
						var rb strings.Builder
						collectT(rt, &rb)
						if s := strings.TrimSpace(rb.String()); s != "" {
							txt.WriteString("(" + s + ")")
						}
					}
				}
			case "footnoteReference", "endnoteReference":
				id := k.a("id")
				key := "f:" + id
				label := "[^" + id + "]"
				if k.name == "endnoteReference" {
					key, label = "e:"+id, "[^e"+id+"]"
				}
				flush()
				b.WriteString(label)
				dr.noteOrder = appendUnique(dr.noteOrder, key)
			case "txbxContent":
				boxes = append(boxes, k)
			case "oMath":
				if tex := ommlLaTeX(k); tex != "" {
					flush()
					if s := b.String(); s != "" && !strings.HasSuffix(s, " ") && !strings.HasSuffix(s, "\n") {
						b.WriteByte(' ')
					}
					b.WriteString("$" + tex + "$")
				}
			case "oMathPara":
				var eqs []string
				walkMath(k, func(m *node) {
					if tex := ommlLaTeX(m); tex != "" {
						eqs = append(eqs, tex)
					}
				})
				if len(eqs) > 0 {
					flush()
					b.WriteString("\n\n$$" + strings.Join(eqs, ` \\ `) + "$$\n\n")
				}
			case "drawing", "pict", "object":
				if pics := dr.pictures(k); len(pics) > 0 {
					flush()
					// marked, so the paragraph can set them on lines of their own (pictureLines)
					open := picInline
					if floating(k) {
						open = picFloat
					}
					for _, s := range pics {
						b.WriteString(open + s + picEnd)
					}
				}
				walk(k.kids)
			case "hyperlink":
				r, ok := dr.rels[relID(k, "id")]
				if !ok || !r.external || inField > 0 {
					walk(k.kids)
					continue
				}
				flush()
				start := b.Len()
				walk(k.kids)
				flush()
				inner := b.String()[start:]
				if strings.TrimSpace(inner) != "" && !strings.ContainsAny(inner, "[]\n") && !strings.ContainsAny(r.target, " ()") {
					rest := b.String()[:start]
					b.Reset()
					b.WriteString(rest + "[" + inner + "](" + r.target + ")")
				}
			case "r":
				// a superscript or subscript run (x², H₂O) keeps its position, as HTML the
				// Markdown allows; a note reference is written as a note mark instead
				tag := ""
				if rpr := k.child("rPr"); rpr != nil && inField == 0 && k.child("footnoteReference") == nil && k.child("endnoteReference") == nil {
					if va := rpr.child("vertAlign"); va != nil {
						switch va.a("val") {
						case "superscript":
							tag = "sup"
						case "subscript":
							tag = "sub"
						}
					}
				}
				if tag == "" || strings.TrimSpace(textOf(k)) == "" {
					walk(k.kids)
					continue
				}
				flush()
				b.WriteString("<" + tag + ">")
				walk(k.kids)
				flush()
				b.WriteString("</" + tag + ">")
			case "commentReference":
				if id := k.a("id"); dr.comments[id] != "" {
					dr.cmOrder = appendUnique(dr.cmOrder, id)
				}
			default:
				walk(k.kids)
			}
		}
	}
	for _, k := range p.kids {
		if k.name == "pPr" {
			continue
		}
		walk([]*node{k})
	}
	flush()
	out := b.String()
	if strings.Contains(out, "</su") {
		// runs Word split inside one superscript read as one
		out = strings.NewReplacer("</sup><sup>", "", "</sub><sub>", "").Replace(out)
	}
	return out, boxes
}

// symbolGreek maps the letters of the Symbol font to the Greek letters it draws.
var symbolGreek = map[byte]rune{
	'a': 'α', 'b': 'β', 'c': 'χ', 'd': 'δ', 'e': 'ε', 'f': 'φ', 'g': 'γ', 'h': 'η', 'i': 'ι', 'j': 'ϕ',
	'k': 'κ', 'l': 'λ', 'm': 'μ', 'n': 'ν', 'o': 'ο', 'p': 'π', 'q': 'θ', 'r': 'ρ', 's': 'σ', 't': 'τ',
	'u': 'υ', 'v': 'ϖ', 'w': 'ω', 'x': 'ξ', 'y': 'ψ', 'z': 'ζ',
	'A': 'Α', 'B': 'Β', 'C': 'Χ', 'D': 'Δ', 'E': 'Ε', 'F': 'Φ', 'G': 'Γ', 'H': 'Η', 'I': 'Ι', 'K': 'Κ',
	'L': 'Λ', 'M': 'Μ', 'N': 'Ν', 'O': 'Ο', 'P': 'Π', 'Q': 'Θ', 'R': 'Ρ', 'S': 'Σ', 'T': 'Τ', 'U': 'Υ',
	'W': 'Ω', 'X': 'Ξ', 'Y': 'Ψ', 'Z': 'Ζ',
	0xA3: '≤', 0xA5: '∞', 0xAE: '→', 0xB0: '°', 0xB1: '±', 0xB3: '≥', 0xB4: '×', 0xB7: '•', 0xB9: '≠',
	0xBA: '≡', 0xBB: '≈', 0xD6: '√', 0xDE: '⇒', 0xE5: '∑', 0xF2: '∫', 0xB6: '∂', 0xC6: '∅', 0xCE: '∈',
	'J': 'ϑ', 'V': 'ς', 0x22: '∀', 0x24: '∃', 0x27: '∋', 0x2A: '∗', 0x2D: '−', 0x40: '≅', 0x5C: '∴',
	0x5E: '⊥', 0x7E: '∼',
}

// symbolWingdings maps the Wingdings characters forms use (boxes, checks, arrows) to Unicode.
var symbolWingdings = map[byte]rune{
	0xFC: '✓', 0xFB: '✗', 0xFE: '☑', 0xFD: '☒', 0xA8: '☐', 0x6F: '☐', 0x6C: '●', 0xA1: '○',
	0x9F: '•', 0xA7: '▪', 0xD8: '➢', 0xE0: '→', 0xE8: '→', 0x4A: '☺',
}

// symbolChar is the character a w:sym (Insert Symbol: a font and a character code, F000+c for a
// symbol font) draws: Greek letters and math signs of Symbol, boxes and checks of Wingdings, the
// character itself in other fonts; "" when it has no meaning outside its font.
func symbolChar(font, code string) string {
	v, err := strconv.ParseUint(code, 16, 32)
	if err != nil || v == 0 {
		return ""
	}
	if v >= 0xF000 && v <= 0xF0FF {
		c := byte(v - 0xF000)
		switch f := strings.ToLower(font); {
		case f == "symbol":
			if r, ok := symbolGreek[c]; ok {
				return string(r)
			}
			if c >= 0x20 && c < 0x7F && !isASCIILetter(c) {
				return string(rune(c)) // digits and punctuation are themselves
			}
		case strings.HasPrefix(f, "wingdings"):
			if r, ok := symbolWingdings[c]; ok && f == "wingdings" {
				return string(r)
			}
		}
		return ""
	}
	if v < 0x20 || v > 0x10FFFF || v >= 0xD800 && v <= 0xDFFF {
		return ""
	}
	return string(rune(v))
}

// field is a Word field open in a paragraph (w:fldChar begin … end).
type field struct {
	instr     strings.Builder // its code
	separated bool            // its result has begun
	link      string          // a HYPERLINK field's address
	start     int             // where its result starts in the paragraph's text; -1 when not a link
}

// hyperlinkInstr is the web or mail address of a HYPERLINK field code (HYPERLINK "https://…"),
// "" for other fields and for a jump inside the document (\l) alone.
func hyperlinkInstr(instr string) string {
	f := strings.Fields(instr)
	if len(f) < 2 || !strings.EqualFold(f[0], "HYPERLINK") {
		return ""
	}
	rest := strings.TrimSpace(instr[strings.Index(instr, f[0])+len(f[0]):])
	var url string
	if strings.HasPrefix(rest, `"`) {
		if end := strings.Index(rest[1:], `"`); end >= 0 {
			url = rest[1 : 1+end]
		}
	} else if !strings.HasPrefix(rest, `\`) {
		url = strings.Fields(rest)[0]
	}
	if webLink(url) || strings.HasPrefix(url, "mailto:") && !strings.ContainsAny(url, " ()<>") {
		return url
	}
	return ""
}

// linkFrom makes the text b holds from start on a Markdown link to url, when it is text a link
// can hold (not empty, no brackets or line breaks).
func linkFrom(b *strings.Builder, start int, url string) {
	s := b.String()
	inner := s[start:]
	if strings.TrimSpace(inner) == "" || strings.ContainsAny(inner, "[]\n\x00") {
		return
	}
	b.Reset()
	b.WriteString(s[:start] + "[" + inner + "](" + url + ")")
}

// checkboxes writes Word's checkbox glyphs as Markdown task-list boxes.
var checkboxes = strings.NewReplacer("☒", "[x]", "☑", "[x]", "☐", "[ ]")

var mathOnly = regexp.MustCompile(`\$[^$]+\$`)

// walkMath calls fn for each m:oMath under n.
func walkMath(n *node, fn func(*node)) {
	for _, k := range n.kids {
		if k.name == "oMath" {
			fn(k)
		} else {
			walkMath(k, fn)
		}
	}
}

// setPart makes part's relationships the ones pictures and charts are looked up in.
func (dr *docxReader) setPart(part string) {
	if dr.pkg != nil {
		dr.rels = dr.pkg.rels(part)
	}
}

// pictures renders a w:drawing or VML picture: each picture in it (a group holds several) as
// an image link to the extracted file with its alt text; a chart's cached data or a diagram's
// text is written after the paragraph instead.
func (dr *docxReader) pictures(k *node) []string {
	if dr.pkg == nil {
		return nil
	}
	var pics []*node
	if find(k, "chart") == nil && find(k, "relIds") == nil {
		walk(k, func(n *node) {
			if n.name == "pic" && find(n, "blip") != nil {
				pics = append(pics, n)
			}
		})
	}
	if len(pics) < 2 {
		if s := dr.picture(k, nil); s != "" {
			return []string{s}
		}
		return nil
	}
	var out []string
	for _, pic := range pics {
		if s := dr.picture(k, pic); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// picture renders one picture of drawing k: pic, one pic:pic of a group (named and described
// by its own cNvPr), or k's only picture when pic is nil; or a chart or diagram (see pictures).
// "" when it holds none of them.
func (dr *docxReader) picture(k, pic *node) string {
	if pic != nil {
		var alt, name string
		if c := find(pic, "cNvPr"); c != nil {
			alt, name = c.a("descr"), c.a("name")
			if alt == "" {
				alt = c.a("title")
			}
		}
		return dr.blipPicture(find(pic, "blip"), alt, name)
	}
	if c := find(k, "chart"); c != nil {
		if r, ok := dr.rels[relID(c, "id")]; ok {
			if md := chartMarkdown(dr.pkg, r.target); md != "" {
				dr.after = append(dr.after, md)
			}
			return ""
		}
	}
	if ids := find(k, "relIds"); ids != nil {
		if md := smartArt(dr.pkg, dr.rels, ids); md != "" {
			dr.after = append(dr.after, md+"\n")
		}
		return ""
	}
	var alt, name string
	d := find(k, "docPr")
	if d != nil {
		alt, name = d.a("descr"), d.a("name")
		if alt == "" {
			alt = d.a("title")
		}
	}
	if blip := find(k, "blip"); blip != nil {
		md := dr.blipPicture(blip, alt, name)
		if h := find(d, "hlinkClick"); h != nil && strings.HasPrefix(md, "![") {
			// a picture one clicks to open a page: the picture links there
			if r, ok := dr.rels[relID(h, "id")]; ok && r.external && (webLink(r.target) || strings.HasPrefix(r.target, "mailto:") && !strings.ContainsAny(r.target, " ()<>")) {
				md = "[" + md + "](" + r.target + ")"
			}
		}
		return md
	}
	id := ""
	if im := find(k, "imagedata"); im != nil {
		id = relID(im, "id")
		if alt == "" {
			alt = im.a("title")
		}
	}
	return dr.relPicture(id, alt, name)
}

// blipPicture renders the picture an a:blip points at (embedded, or linked to).
func (dr *docxReader) blipPicture(blip *node, alt, name string) string {
	if blip == nil {
		return ""
	}
	id := relID(blip, "embed")
	if id == "" {
		id = relID(blip, "link") // a picture linked to, not stored in the document
	}
	return dr.relPicture(id, alt, name)
}

// relPicture renders the picture of relationship id: extracted beside the Markdown, a web
// address, or its alt text alone.
func (dr *docxReader) relPicture(id, alt, name string) string {
	if id == "" {
		return ""
	}
	r, ok := dr.rels[id]
	if ok && r.external && webLink(r.target) {
		return imageMarkdown(alt, r.target) // a picture on the web, as in PPTX
	}
	if !ok || r.external {
		return imageMarkdown(alt, "")
	}
	return imageMarkdown(alt, dr.assets.add(dr.pkg, r.target, strings.ReplaceAll(name, " ", "")))
}

// Marks around a picture's Markdown in a paragraph's text (paraText), resolved by pictureLines.
const (
	picInline = "\x00Pi\x00" // a picture in the line of text (wp:inline)
	picFloat  = "\x00Pf\x00" // a picture placed on the page beside the text (wp:anchor, positioned VML)
	picEnd    = "\x00Pe\x00"
)

// floating reports whether a w:drawing or VML picture floats on the page rather than standing
// in the line of text.
func floating(k *node) bool {
	if find(k, "anchor") != nil {
		return true
	}
	found := false
	walk(k, func(n *node) {
		if !found && (n.name == "shape" || n.name == "rect") && strings.Contains(strings.ReplaceAll(n.a("style"), " ", ""), "position:absolute") {
			found = true
		}
	})
	return found
}

// pictureLines takes the marked pictures out of a paragraph's text: pictures before the first
// text and after the last, and floating pictures anywhere, stand on lines of their own (before
// and after the text); a picture inside a sentence in the line of text stays where it is.
func pictureLines(text string) (before []string, rest string, after []string) {
	if !strings.Contains(text, picEnd) {
		return nil, text, nil
	}
	type piece struct {
		pic, float bool
		s          string
	}
	var ps []piece
	for text != "" {
		i, fl := strings.Index(text, picInline), false
		if j := strings.Index(text, picFloat); j >= 0 && (i < 0 || j < i) {
			i, fl = j, true
		}
		if i < 0 {
			ps = append(ps, piece{s: text})
			break
		}
		if i > 0 {
			ps = append(ps, piece{s: text[:i]})
		}
		text = text[i+len(picInline):]
		e := strings.Index(text, picEnd)
		if e < 0 {
			e = len(text)
		}
		ps = append(ps, piece{pic: true, float: fl, s: text[:e]})
		text = text[min(len(text), e+len(picEnd)):]
	}
	blank := func(p piece) bool { return !p.pic && strings.TrimSpace(p.s) == "" }
	lo, hi := 0, len(ps)
	for lo < hi && (ps[lo].pic || blank(ps[lo])) {
		if ps[lo].pic {
			before = append(before, ps[lo].s)
		}
		lo++
	}
	var tail []string
	for hi > lo && (ps[hi-1].pic || blank(ps[hi-1])) {
		if ps[hi-1].pic {
			tail = append([]string{ps[hi-1].s}, tail...)
		}
		hi--
	}
	var b strings.Builder
	for _, p := range ps[lo:hi] {
		switch {
		case p.pic && p.float:
			after = append(after, p.s)
		case p.pic:
			if s := b.String(); s != "" && !strings.HasSuffix(s, " ") && !strings.HasSuffix(s, "\n") {
				b.WriteByte(' ')
			}
			b.WriteString(p.s + " ")
		default:
			b.WriteString(p.s)
		}
	}
	return before, b.String(), append(after, tail...)
}

// readComments reads word/comments.xml: each comment's author, date and text.
func (dr *docxReader) readComments(root *node) {
	walk(root, func(k *node) {
		if k.name != "comment" {
			return
		}
		who := escapeInline(k.a("author"))
		if who == "" {
			who = "anonymous"
		}
		if d := k.a("date"); d != "" {
			who += ", " + escapeInline(d)
		}
		if t := oneLine(dr.blocksText(k)); t != "" {
			dr.comments[k.a("id")] = "(" + who + "): " + t
		}
	})
}

func collectT(n *node, b *strings.Builder) {
	for _, k := range n.kids {
		if k.name == "t" {
			b.WriteString(k.text)
		} else if k.name != "delText" && k.name != "del" {
			collectT(k, b)
		}
	}
}

func appendUnique(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

// table renders w:tbl as a Markdown table. Horizontally merged cells (gridSpan) and vertically
// merged ones (vMerge) repeat the merged cell's text in every grid cell they cover, so each row
// reads on its own.
func (dr *docxReader) table(b *strings.Builder, t *node) {
	// a table of one cell is a frame around its content (a layout, not data): its blocks are
	// written as they are, lists and nested tables included
	var trs, tcs []*node
	for _, tr := range t.kids {
		if tr.name == "tr" {
			trs = append(trs, tr)
			for _, tc := range tr.kids {
				if tc.name == "tc" {
					tcs = append(tcs, tc)
				}
			}
		}
	}
	if len(trs) == 1 && len(tcs) == 1 {
		dr.blocks(b, tcs[0].kids)
		return
	}
	var rows [][]string
	var prev []string
	for _, tr := range t.kids {
		if tr.name != "tr" {
			continue
		}
		if dr.ctx.Err() != nil {
			return // convertDOCX reports the context's end
		}
		var row []string
		// a row may start or end beside the grid (w:gridBefore, w:gridAfter): its first cell
		// stands under a later column
		before, after := gridSkip(tr, "gridBefore"), gridSkip(tr, "gridAfter")
		for range before {
			row = append(row, "")
		}
		for _, tc := range tr.kids {
			if tc.name == "sdt" {
				if c := tc.child("sdtContent"); c != nil && c.child("tc") != nil {
					tc = c.child("tc")
				}
			}
			if tc.name != "tc" {
				continue
			}
			span, vcont := 1, false
			if pr := tc.child("tcPr"); pr != nil {
				if g := pr.child("gridSpan"); g != nil {
					if v, err := strconv.Atoi(g.a("val")); err == nil && v > 1 && v < 64 {
						span = v
					}
				}
				if vm := pr.child("vMerge"); vm != nil && vm.a("val") != "restart" {
					vcont = true
				}
			}
			text := dr.cellText(tc)
			col := len(row)
			if vcont && col < len(prev) {
				text = prev[col]
			}
			for i := 0; i < span; i++ {
				row = append(row, text)
			}
		}
		for range after {
			row = append(row, "")
		}
		rows = append(rows, row)
		prev = row
	}
	if len(rows) == 0 {
		return
	}
	writeTable(b, rows)
	b.WriteString("\n")
	// charts and diagrams drawn in cells follow the table
	for _, a := range dr.after {
		b.WriteString(a + "\n")
	}
	dr.after = dr.after[:0]
}

// gridSkip is the number of grid columns a row leaves empty before or after its cells (name
// gridBefore or gridAfter in its w:trPr), 0 when unset or implausible.
func gridSkip(tr *node, name string) int {
	if pr := tr.child("trPr"); pr != nil {
		if g := pr.child(name); g != nil {
			if v, err := strconv.Atoi(g.a("val")); err == nil && v > 0 && v < 64 {
				return v
			}
		}
	}
	return 0
}

func (dr *docxReader) cellText(tc *node) string {
	var parts []string
	for _, line := range strings.Split(checkboxes.Replace(dr.blocksText(tc)), "\n") {
		if s := strings.TrimSpace(line); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}
