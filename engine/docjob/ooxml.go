package docjob

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxMediaTotal bounds the images and other binary parts one Office package may extract beside
// its Markdown, so a package of many large pictures cannot fill the output folder.
const maxMediaTotal = MaxFileSize

// Asset is a binary part a conversion extracts beside its Markdown (a picture of a slide or a
// Word document). The Markdown links it as ASSETDIR/Name; the handler writes it there.
type Asset struct {
	Name string
	Data []byte
}

// opc reads parts of an Office Open XML package (PPTX, DOCX, XLSX charts) with the limits every
// part gets: each XML part at most maxXMLPart, the package's expanded bytes at most MaxTotalSize,
// extracted media at most maxMediaTotal, and encrypted entries reported as a password.
type opc struct {
	ctx    context.Context
	kind   Kind
	zr     *zip.Reader
	files  map[string]*zip.File
	budget int64 // expanded bytes left to read
	media  int64 // media bytes left to extract
}

func newOPC(ctx context.Context, kind Kind, data []byte) (*opc, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if zr == nil {
		return nil, errDamaged(kind, err)
	}
	p := &opc{ctx: ctx, kind: kind, zr: zr, files: make(map[string]*zip.File, len(zr.File)),
		budget: MaxTotalSize, media: maxMediaTotal}
	for _, f := range zr.File {
		p.files[strings.TrimPrefix(f.Name, "/")] = f
	}
	return p, nil
}

// has reports whether the package holds part name.
func (p *opc) has(name string) bool { return p.files[name] != nil }

// raw reads part name's bytes, at most limit (its declared and actual size), counted against
// the package's budget. ok is false when the part does not exist.
func (p *opc) raw(name string, limit int64) ([]byte, bool, error) {
	f := p.files[name]
	if f == nil {
		return nil, false, nil
	}
	if f.Flags&1 != 0 {
		return nil, true, errPassword(p.kind)
	}
	size := int64(f.UncompressedSize64)
	if size > limit || f.UncompressedSize64 > 1<<62 {
		return nil, true, errTooLarge("part "+name, "文書内のパーツ "+name+" ", size, limit)
	}
	if size > p.budget {
		return nil, true, errTooLarge("the expanded document", "展開後の文書", MaxTotalSize-p.budget+size, MaxTotalSize)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, true, err
	}
	defer rc.Close()
	buf := bytes.NewBuffer(make([]byte, 0, min(size, 1<<20)))
	lr := &limitReader{r: rc, n: size}
	_, err = io.Copy(buf, lr)
	p.budget -= int64(buf.Len())
	if lr.over {
		return nil, true, errTooLarge("part "+name, "文書内のパーツ "+name+" ", size+1, size)
	}
	if err != nil {
		return nil, true, err
	}
	return buf.Bytes(), true, nil
}

// xml parses part name into a node tree (nil, false when it does not exist).
func (p *opc) xml(name string) (*node, bool, error) {
	b, ok, err := p.raw(name, maxXMLPart)
	if !ok || err != nil {
		return nil, ok, err
	}
	n, err := parseXML(p.ctx, bytes.NewReader(b))
	if err == nil && n.unclosed {
		err = errors.New("the part " + name + " ends before its elements close")
	}
	return n, true, err
}

// rel is one relationship of a part: its type's last path segment ("image", "chart", "slide",
// "notesSlide", …), its target resolved to a part name, and whether it points outside.
type rel struct {
	typ, target string
	external    bool
}

// rels reads the relationships of part name (empty when it has none).
func (p *opc) rels(name string) map[string]rel {
	dir, file := path.Split(name)
	relsName := dir + "_rels/" + file + ".rels"
	n, ok, err := p.xml(relsName)
	out := map[string]rel{}
	if !ok || err != nil {
		return out
	}
	walk(n, func(k *node) {
		if k.name != "Relationship" {
			return
		}
		t := k.a("Type")
		if i := strings.LastIndexByte(t, '/'); i >= 0 {
			t = t[i+1:]
		}
		r := rel{typ: t, external: strings.EqualFold(k.a("TargetMode"), "External")}
		target := k.a("Target")
		if r.external {
			r.target = target
		} else if strings.HasPrefix(target, "/") {
			r.target = strings.TrimPrefix(path.Clean(target), "/")
		} else {
			r.target = strings.TrimPrefix(path.Clean(path.Join(dir, target)), "/")
		}
		out[k.a("Id")] = r
	})
	return out
}

// walk calls fn for n and every element below it, in document order.
func walk(n *node, fn func(*node)) {
	if n == nil {
		return
	}
	fn(n)
	for _, k := range n.kids {
		walk(k, fn)
	}
}

// find returns the first element named name at or below n (depth first), or nil.
func find(n *node, name string) *node {
	if n == nil {
		return nil
	}
	if n.name == name {
		return n
	}
	for _, k := range n.kids {
		if f := find(k, name); f != nil {
			return f
		}
	}
	return nil
}

// textOf joins the text of every t element below n (DrawingML a:t, WordprocessingML w:t).
func textOf(n *node) string {
	var b strings.Builder
	walk(n, func(k *node) {
		if k.name == "t" {
			b.WriteString(k.text)
		}
	})
	return b.String()
}

// mediaExt is the file extension of a media part, lower case, "" for parts no viewer shows.
func mediaExt(name string) string {
	switch ext := strings.ToLower(path.Ext(name)); ext {
	case ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".tif", ".tiff", ".svg", ".webp", ".emf", ".wmf":
		return ext
	}
	return ""
}

// assets collects the pictures a conversion extracts, each once, named after the shape (as the
// deck's or document's selection pane shows it) or else the part.
type assets struct {
	dir   string // folder the Markdown links into; "" links the pictures by name alone (beside it)
	off   bool   // no pictures are written (an archive's entry, a mail's attachment)
	files []Asset
	names map[string]string // part name → asset name
}

// add extracts picture part from p and returns the link for it (dir/name, or name when there is
// no folder), or "" when the picture is not written (pictures off, missing or too large): the
// caller then keeps only the alt text. name is the preferred file name stem.
func (a *assets) add(p *opc, part, stem string) string {
	if a.off {
		return ""
	}
	if n, ok := a.names[part]; ok {
		return a.link(n)
	}
	ext := mediaExt(part)
	f := p.files[part]
	if ext == "" || f == nil || int64(f.UncompressedSize64) > p.media {
		return ""
	}
	data, ok, err := p.raw(part, p.media)
	if !ok || err != nil {
		return ""
	}
	p.media -= int64(len(data))
	if a.names == nil {
		a.names = map[string]string{}
	}
	stem = safeStem(stem)
	if stem == "" {
		stem = safeStem(strings.TrimSuffix(path.Base(part), path.Ext(part)))
	}
	name := stem + ext
	for i := 2; a.taken(name); i++ {
		name = stem + "_" + itoa(i) + ext
	}
	a.names[part] = name
	a.files = append(a.files, Asset{Name: name, Data: data})
	return a.link(name)
}

func (a *assets) link(name string) string {
	if a.dir == "" {
		return name
	}
	return a.dir + "/" + name
}

func (a *assets) taken(name string) bool {
	for _, f := range a.files {
		if strings.EqualFold(f.Name, name) {
			return true
		}
	}
	return false
}

// safeStem keeps letters (Japanese included), digits, '-' and '_' of s (spaces become '_'), at
// most 40 bytes.
func safeStem(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == ' ' {
			r = '_'
		}
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_') {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > 40 {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	if i == 0 {
		return "0"
	}
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	return string(b[n:])
}

// webLink reports whether target, a relationship's external target, is a web address that a
// Markdown link can hold as it is.
func webLink(target string) bool {
	return (strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "http://")) && !strings.ContainsAny(target, " ()<>")
}

// imageMarkdown is a picture's Markdown: a link when it was extracted, else its alt text in
// brackets so the reader knows a picture stood there.
func imageMarkdown(alt, link string) string {
	alt = escapeInline(strings.NewReplacer("[", "(", "]", ")").Replace(strings.Join(strings.Fields(alt), " ")))
	if link == "" {
		if alt == "" {
			return "[image]"
		}
		return "[image: " + alt + "]"
	}
	if strings.ContainsAny(link, " <>") {
		link = "<" + strings.NewReplacer("<", "%3C", ">", "%3E").Replace(link) + ">"
	}
	return "![" + alt + "](" + link + ")"
}

// smartArt renders a SmartArt diagram (dgm:relIds pointing at its data part) as a list of its
// nodes' text, nested as the diagram's parent-child connections nest them (in each parent's
// order); nodes no connection reaches follow in the data's order. "" when the data part is
// missing or has no text.
func smartArt(p *opc, rels map[string]rel, ids *node) string {
	r, ok := rels[relID(ids, "dm")]
	if !ok || r.external {
		return ""
	}
	root, ok, err := p.xml(r.target)
	if !ok || err != nil {
		return ""
	}
	type kid struct {
		ord int
		id  string
	}
	text := map[string][]string{} // node model id → its paragraphs
	var order []string            // node model ids in the data's order
	doc := ""
	kids := map[string][]kid{}
	walk(root, func(k *node) {
		switch k.name {
		case "pt":
			t := k.a("type")
			if t == "doc" {
				doc = k.a("modelId")
			}
			if t != "" && t != "node" {
				return // parent/sibling transitions, the document node, presentation points
			}
			id := k.a("modelId")
			order = append(order, id)
			if tb := k.child("t"); tb != nil {
				for _, para := range tb.kids {
					if para.name == "p" {
						if s := strings.TrimSpace(oneLine(textOf(para))); s != "" {
							text[id] = append(text[id], s)
						}
					}
				}
			}
		case "cxn":
			if t := k.a("type"); t != "" && t != "parOf" {
				return // presentation links
			}
			ord, _ := strconv.Atoi(k.a("srcOrd"))
			kids[k.a("srcId")] = append(kids[k.a("srcId")], kid{ord, k.a("destId")})
		}
	})
	var b strings.Builder
	done := map[string]bool{}
	var write func(id string, depth int)
	write = func(id string, depth int) {
		if done[id] || depth > 8 {
			return
		}
		done[id] = true
		shown := false
		for _, s := range text[id] {
			b.WriteString(strings.Repeat("  ", depth) + "- " + escapeLineStarts(escapeInline(s)) + "\n")
			shown = true
		}
		next := depth
		if shown {
			next++
		}
		ks := kids[id]
		sort.SliceStable(ks, func(i, j int) bool { return ks[i].ord < ks[j].ord })
		for _, k := range ks {
			if _, isNode := text[k.id]; isNode || len(kids[k.id]) > 0 {
				write(k.id, next)
			}
		}
	}
	if doc != "" {
		done[doc] = true
		ks := kids[doc]
		sort.SliceStable(ks, func(i, j int) bool { return ks[i].ord < ks[j].ord })
		for _, k := range ks {
			write(k.id, 0)
		}
	}
	for _, id := range order {
		write(id, 0)
	}
	return strings.TrimRight(b.String(), "\n")
}
