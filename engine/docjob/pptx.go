package docjob

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"jobdesk/engine/job"
)

// convertPPTX reads PresentationML directly, one slide after another in the presentation's
// order. Each slide begins with a marker line "<!-- Slide N -->" ("<!-- Slide N (hidden) -->" for
// a hidden slide), then "## title" when the slide has a title, then the text frames in reading
// order (top to bottom, then left to right; grouped shapes in place, positions inherited from the
// layout), bulleted and numbered paragraphs as lists, tables as Markdown tables (merged cells
// repeated), charts' cached data as tables, pictures extracted beside the Markdown with their alt
// text, then the slide's comments and speaker notes. A picture whose image is not in the file (no
// image data, a relationship to a part that is not there, a link to a file on the author's
// computer) is an HTML comment naming it, not text of the slide. The marker is an HTML comment so
// that the slide's own words follow one another as in the deck; readers of the Markdown find
// slides by it (see slideMarker).
func convertPPTX(ctx context.Context, data []byte, opt Options) (*Doc, error) {
	if isEncryptedOLE(data) {
		return nil, errPassword(KindPPTX)
	}
	p, err := newOPC(ctx, KindPPTX, data)
	if err != nil {
		return nil, err
	}
	wrap := func(err error) error {
		var je *job.Error
		if errors.As(err, &je) {
			return je
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errDamaged(KindPPTX, err)
	}
	pres, ok, err := p.xml("ppt/presentation.xml")
	if err != nil {
		return nil, wrap(err)
	}
	if !ok {
		return nil, errDamaged(KindPPTX, reason("the presentation part (ppt/presentation.xml) is missing"))
	}
	prels := p.rels("ppt/presentation.xml")
	var slides []string // part names; "" for a listed slide whose part is missing
	var slideIDs []string
	if lst := find(pres, "sldIdLst"); lst != nil {
		for _, s := range lst.kids {
			if s.name != "sldId" {
				continue
			}
			slideIDs = append(slideIDs, s.a("id"))
			r, ok := prels[relID(s, "id")]
			if ok && p.has(r.target) {
				slides = append(slides, r.target)
			} else {
				slides = append(slides, "")
			}
		}
	}
	pr := &pptxReader{p: p, ctx: ctx, assets: &assets{dir: opt.assetDir, off: opt.noAssets}, authors: map[string]string{},
		layouts: map[string]map[string]pos{}}
	pr.readAuthors()
	d := &Doc{Kind: KindPPTX, Pages: len(slides), Method: MethodNative}
	sections := sectionStarts(pres)
	var b strings.Builder
	for i, s := range slides {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if name, ok := sections[slideIDs[i]]; ok && name != "" {
			b.WriteString("# " + escapeInline(oneLine(name)) + "\n\n")
		}
		var err error
		if s == "" {
			err = errors.New("the slide's part is missing")
		} else {
			err = pr.slide(&b, i+1, s, d)
		}
		if err != nil {
			var je *job.Error
			if errors.As(err, &je) || ctx.Err() != nil {
				return nil, wrap(err)
			}
			// one damaged slide: the others are still converted, and the result says which
			logDetail(KindPPTX, fmt.Sprintf("slide %d: %v", i+1, err))
			b.WriteString(slideMarker(i+1, false) + "\n\n> (this slide could not be read)\n\n")
			d.DamagedPages = append(d.DamagedPages, i+1)
		}
		if opt.Progress != nil {
			opt.Progress(float64(i+1)*90/float64(len(slides)), fmt.Sprintf("slide %d of %d", i+1, len(slides)))
		}
	}
	if len(slides) == 0 {
		b.WriteString("> (the presentation has no slides)\n")
	}
	d.Markdown = strings.TrimSpace(Clean(b.String())) + "\n"
	d.Assets = pr.assets.files
	if len(pr.missing) > 0 {
		d.Notes = append(d.Notes, "pictures whose image is not in the file: "+strings.Join(pr.missing, "; "))
	}
	return d, nil
}

// slideMarker is the line that begins slide num: an HTML comment, so that no words of ours stand
// between a slide's words and the next slide's ("<!-- Slide 3 -->", "<!-- Slide 3 (hidden) -->").
func slideMarker(num int, hidden bool) string {
	if hidden {
		return "<!-- Slide " + strconv.Itoa(num) + " (hidden) -->"
	}
	return "<!-- Slide " + strconv.Itoa(num) + " -->"
}

// sectionStarts maps the id of each section's first slide to the section's name (the sections
// PowerPoint shows in its slide list, p14:sectionLst); empty for a deck without sections.
func sectionStarts(pres *node) map[string]string {
	out := map[string]string{}
	lst := find(pres, "sectionLst")
	if lst == nil {
		return out
	}
	for _, sec := range lst.kids {
		if sec.name != "section" {
			continue
		}
		if ids := sec.child("sldIdLst"); ids != nil {
			for _, id := range ids.kids {
				if id.name == "sldId" {
					if _, dup := out[id.a("id")]; !dup {
						out[id.a("id")] = sec.a("name")
					}
					break
				}
			}
		}
	}
	return out
}

// relID is the relationship id attribute name of n (r:id, r:embed, …) whatever the prefix.
func relID(n *node, name string) string {
	if v, ok := n.attr["r:"+name]; ok {
		return v
	}
	for k, v := range n.attr {
		if strings.HasSuffix(k, ":"+name) {
			return v
		}
	}
	return ""
}

type pos struct {
	x, y int64
	ok   bool
}

type pptxReader struct {
	p       *opc
	ctx     context.Context
	assets  *assets
	authors map[string]string
	layouts map[string]map[string]pos // layout part → placeholder key → position
	rels    map[string]rel            // the current slide's relationships
	place   map[string]pos            // the current slide's layout placeholders
	num     int                       // the current slide's number
	missing []string                  // pictures whose image is not in the file ("slide 2: Picture 3")
}

// readAuthors reads the comment authors (legacy commentAuthors.xml and modern authors.xml).
func (pr *pptxReader) readAuthors() {
	for _, part := range []string{"ppt/commentAuthors.xml", "ppt/authors.xml"} {
		n, ok, err := pr.p.xml(part)
		if !ok || err != nil {
			continue
		}
		walk(n, func(k *node) {
			if k.name == "cmAuthor" || k.name == "author" {
				name := k.a("name")
				if in := k.a("initials"); in != "" && name != "" {
					name += " (" + in + ")"
				}
				pr.authors[k.a("id")] = name
			}
		})
	}
}

// slideItem is one rendered shape and where it stands on the slide.
type slideItem struct {
	at    pos
	order int
	text  string
}

func (pr *pptxReader) slide(b *strings.Builder, num int, part string, d *Doc) error {
	root, _, err := pr.p.xml(part)
	if err != nil {
		return err
	}
	pr.rels = pr.p.rels(part)
	pr.place = nil
	pr.num = num
	for _, r := range pr.rels {
		if r.typ == "slideLayout" {
			pr.place = pr.layout(r.target)
		}
	}
	hidden := false
	if s := find(root, "sld"); s != nil && (s.a("show") == "0" || s.a("show") == "false") {
		hidden = true
	}
	var title string
	var items []slideItem
	if tree := find(root, "spTree"); tree != nil {
		items = pr.shapes(tree.kids, &title)
	}
	b.WriteString(slideMarker(num, hidden) + "\n\n")
	if title != "" {
		b.WriteString("## " + oneLine(title) + "\n\n")
	}
	if hidden {
		d.Notes = append(d.Notes, fmt.Sprintf("hidden slide: %d", num))
	}
	for _, it := range items {
		if t := strings.TrimSpace(it.text); t != "" {
			b.WriteString(t + "\n\n")
		}
	}
	for _, r := range pr.rels {
		if r.typ == "comments" || r.typ == "comment" {
			pr.comments(b, r.target)
		}
	}
	for _, r := range pr.rels {
		if r.typ == "notesSlide" {
			if notes := pr.notes(r.target); notes != "" {
				b.WriteString("### Notes\n\n" + notes + "\n\n")
			}
		}
	}
	return pr.ctx.Err()
}

// layout reads a slide layout's placeholder positions (key "type:idx", "idx:N", "type:T"), cached
// per layout, with its slide master's positions by type where the layout gives none.
func (pr *pptxReader) layout(part string) map[string]pos {
	if m, ok := pr.layouts[part]; ok {
		return m
	}
	m := map[string]pos{}
	pr.layouts[part] = m
	root, ok, err := pr.p.xml(part)
	if !ok || err != nil {
		return m
	}
	defer func() {
		// a placeholder the layout does not place stands where the slide master puts its type
		for _, r := range pr.p.rels(part) {
			if r.typ != "slideMaster" || strings.HasPrefix(part, "ppt/slideMasters/") {
				continue
			}
			for k, at := range pr.layout(r.target) {
				if _, ok := m[k]; !ok && strings.HasPrefix(k, "type:") {
					m[k] = at
				}
			}
		}
	}()
	walk(root, func(k *node) {
		if k.name != "sp" {
			return
		}
		ph := find(k.child("nvSpPr"), "ph")
		if ph == nil {
			return
		}
		if set, bullet := lstBullet(k.child("txBody")); set && !bullet {
			// the layout takes the bullets off this placeholder (a section header's text)
			m["nobullet:"+phKey(ph)] = pos{ok: true}
			m["nobullet:idx:"+ph.a("idx")] = pos{ok: true}
		}
		if at := offset(k.child("spPr")); at.ok {
			m[phKey(ph)] = at
			m["type:"+phType(ph)] = at
			if idx := ph.a("idx"); idx != "" {
				m["idx:"+idx] = at
			}
		}
	})
	return m
}

func phType(ph *node) string {
	if t := ph.a("type"); t != "" {
		return t
	}
	return "body"
}

func phKey(ph *node) string { return phType(ph) + ":" + ph.a("idx") }

// offset is the a:off of the a:xfrm under n.
func offset(n *node) pos {
	x := find(n, "xfrm")
	if x == nil {
		return pos{}
	}
	off := x.child("off")
	if off == nil {
		return pos{}
	}
	xv, err1 := strconv.ParseInt(off.a("x"), 10, 64)
	yv, err2 := strconv.ParseInt(off.a("y"), 10, 64)
	return pos{xv, yv, err1 == nil && err2 == nil}
}

// shapes renders the shapes of a shape tree or group, sorted into reading order. The first
// title placeholder's text becomes the slide title.
func (pr *pptxReader) shapes(ks []*node, title *string) []slideItem {
	var items []slideItem
	for i, k := range ks {
		if pr.ctx.Err() != nil {
			break
		}
		var it slideItem
		it.order = i
		switch k.name {
		case "sp":
			nv := k.child("nvSpPr")
			ph := find(nv, "ph")
			it.at = offset(k.child("spPr"))
			if !it.at.ok && ph != nil && pr.place != nil {
				for _, key := range []string{phKey(ph), "idx:" + ph.a("idx"), "type:" + phType(ph)} {
					if at, ok := pr.place[key]; ok {
						it.at = at
						break
					}
				}
			}
			if ph != nil && (ph.a("type") == "title" || ph.a("type") == "ctrTitle") && *title == "" {
				*title = oneLine(paragraphsText(k.child("txBody"), " "))
				if *title != "" {
					continue
				}
			}
			body := ph != nil && (phType(ph) == "body" || ph.a("type") == "obj")
			if body && pr.place != nil && (pr.place["nobullet:"+phKey(ph)].ok || ph.a("idx") != "" && pr.place["nobullet:idx:"+ph.a("idx")].ok) {
				body = false
			}
			if set, bullet := lstBullet(k.child("txBody")); set {
				body = bullet // the shape's own list style
			}
			it.text = pr.textBody(k.child("txBody"), body)
			if fill := find(k.child("spPr"), "blipFill"); fill != nil && fill.child("blip") != nil {
				// a shape filled with a picture (a photo cut to a circle): the picture, then
				// the shape's own text
				it.text = strings.TrimSpace(pr.blipPicture(find(nv, "cNvPr"), fill.child("blip"), "") + "\n\n" + it.text)
			}
		case "grpSp":
			it.at = offset(k.child("grpSpPr"))
			var parts []string
			for _, sub := range pr.shapes(k.kids, title) {
				if t := strings.TrimSpace(sub.text); t != "" {
					parts = append(parts, t)
				}
			}
			it.text = strings.Join(parts, "\n\n")
		case "graphicFrame":
			it.at = offset(k.child("xfrm"))
			if !it.at.ok {
				it.at = offset(k)
			}
			it.text = pr.graphic(k)
		case "pic":
			it.at = offset(k.child("spPr"))
			it.text = pr.picture(k)
		case "cxnSp":
			continue
		case "AlternateContent":
			// the first choice's shapes (all of them), else the fallback's
			var sub []slideItem
			if c := k.child("Choice"); c != nil {
				sub = pr.shapes(c.kids, title)
			}
			if len(sub) == 0 {
				if f := k.child("Fallback"); f != nil {
					sub = pr.shapes(f.kids, title)
				}
			}
			for _, s := range sub {
				s.order = i
				items = append(items, s)
			}
			continue
		default:
			continue
		}
		items = append(items, it)
	}
	// a shape with no position (and none from its layout) reads where it stands in the tree:
	// right after the shape before it
	var last pos
	for i := range items {
		if items[i].at.ok {
			last = items[i].at
		} else {
			items[i].at = pos{last.x, last.y, true}
		}
	}
	sort.SliceStable(items, func(a, b int) bool {
		pa, pb := items[a].at, items[b].at
		// shapes whose tops are within a small band read left to right
		if d := pa.y - pb.y; d > 100000 || d < -100000 {
			return pa.y < pb.y
		}
		if pa.x != pb.x {
			return pa.x < pb.x
		}
		return items[a].order < items[b].order
	})
	return items
}

// textBody renders a:p paragraphs: bulleted ones (a:buChar, or a body placeholder's default) as
// "- " items, auto-numbered ones (a:buAutoNum) as "1." items, indented by their level.
func (pr *pptxReader) textBody(tb *node, bodyDefault bool) string {
	if tb == nil {
		return ""
	}
	var lines []string
	counters := map[int]int{}
	for _, p := range tb.kids {
		if p.name != "p" {
			continue
		}
		text := strings.TrimSpace(pr.paraMarkdown(p))
		lvl := 0
		bullet, number := bodyDefault, ""
		if ppr := p.child("pPr"); ppr != nil {
			if v, err := strconv.Atoi(ppr.a("lvl")); err == nil && v > 0 && v < 9 {
				lvl = v
			}
			switch {
			case ppr.child("buNone") != nil:
				bullet = false
			case ppr.child("buAutoNum") != nil:
				bullet = true
				if _, ok := counters[lvl]; !ok {
					// a list numbered from startAt (a continued list: 4, 5, 6)
					if v, err := strconv.Atoi(ppr.child("buAutoNum").a("startAt")); err == nil && v > 1 && v < 100000 {
						counters[lvl] = v - 1
					}
				}
				counters[lvl]++
				for l := lvl + 1; l < 9; l++ {
					delete(counters, l)
				}
				number = autoNumMarker(ppr.child("buAutoNum").a("type"), counters[lvl])
			case ppr.child("buChar") != nil || ppr.child("buBlip") != nil:
				bullet = true
			}
		}
		if number == "" {
			delete(counters, lvl)
		}
		if text == "" {
			lines = append(lines, "")
			continue
		}
		if bullet {
			marker := "-"
			if number != "" {
				marker = number
				if !isListMarker(number) {
					marker = "- " + number // (1), ①: not a Markdown list marker
				}
			}
			text = strings.Repeat("  ", lvl) + marker + " " + escapeLineStarts(strings.ReplaceAll(text, "\n", " "))
			lines = append(lines, text)
			continue
		}
		lines = append(lines, "", escapeLineStarts(text), "")
	}
	// collapse the blank lines around plain paragraphs; list items stay together
	var out []string
	for _, l := range lines {
		if l == "" && (len(out) == 0 || out[len(out)-1] == "") {
			continue
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// lstBullet reads the first level of a text body's list style: set when it says whether its
// paragraphs are bulleted (a:buNone, or a:buChar / a:buAutoNum), and which.
func lstBullet(tb *node) (set, bullet bool) {
	if tb == nil {
		return false, false
	}
	l1 := tb.child("lstStyle")
	if l1 != nil {
		l1 = l1.child("lvl1pPr")
	}
	if l1 == nil {
		return false, false
	}
	switch {
	case l1.child("buNone") != nil:
		return true, false
	case l1.child("buChar") != nil || l1.child("buAutoNum") != nil:
		return true, true
	}
	return false, false
}

// paragraphsText joins the text of txBody's paragraphs with sep.
func paragraphsText(tb *node, sep string) string {
	if tb == nil {
		return ""
	}
	var ps []string
	for _, p := range tb.kids {
		if p.name == "p" {
			ps = append(ps, drawingParaText(p))
		}
	}
	return strings.Join(ps, sep)
}

// drawingParaText is the text of an a:p: its runs and fields, line breaks as newlines.
func drawingParaText(p *node) string {
	var t strings.Builder
	for _, r := range p.kids {
		switch r.name {
		case "r", "fld":
			t.WriteString(textOf(r))
		case "br":
			t.WriteString("\n")
		}
	}
	return escapeInline(t.String()) // the runs as one: a "<div>" may be split across them
}

// paraMarkdown is the text of an a:p like drawingParaText, with runs that link to a web page or
// a mail address (a:hlinkClick) as Markdown links.
func (pr *pptxReader) paraMarkdown(p *node) string {
	var b, txt strings.Builder
	link := ""
	flush := func() {
		if txt.Len() == 0 {
			return
		}
		s := escapeInline(txt.String())
		txt.Reset()
		inner := strings.TrimSpace(s)
		if link == "" || inner == "" || strings.ContainsAny(inner, "[]\n") {
			b.WriteString(s)
			return
		}
		lead, trail := s[:strings.Index(s, inner)], s[strings.Index(s, inner)+len(inner):]
		b.WriteString(lead + "[" + inner + "](" + link + ")" + trail)
	}
	for _, r := range p.kids {
		switch r.name {
		case "r", "fld":
			if tag := baselineTag(r); tag != "" && strings.TrimSpace(textOf(r)) != "" {
				// superscript or subscript (x², H₂O), as HTML the Markdown allows
				flush()
				b.WriteString("<" + tag + ">" + escapeInline(textOf(r)) + "</" + tag + ">")
				continue
			}
			if l := pr.runLink(r); l != link {
				flush()
				link = l
			}
			txt.WriteString(textOf(r))
		case "br":
			txt.WriteString("\n")
		}
	}
	flush()
	out := b.String()
	if strings.Contains(out, "</su") {
		out = strings.NewReplacer("</sup><sup>", "", "</sub><sub>", "").Replace(out)
	}
	return out
}

// baselineTag is "sup" for a run raised above the baseline (a:rPr baseline > 0), "sub" for one
// lowered, else "".
func baselineTag(r *node) string {
	rpr := r.child("rPr")
	if rpr == nil {
		return ""
	}
	v, err := strconv.Atoi(rpr.a("baseline"))
	switch {
	case err != nil || v == 0:
		return ""
	case v > 0:
		return "sup"
	}
	return "sub"
}

// runLink is the address a run's a:hlinkClick points at when it is a web page or a mail
// address ("" for none, a jump to another slide, or an address a Markdown link cannot hold).
func (pr *pptxReader) runLink(r *node) string {
	h := find(r.child("rPr"), "hlinkClick")
	if h == nil {
		return ""
	}
	return pr.linkTarget(relID(h, "id"))
}

// linkTarget is the web or mail address relationship id points at ("" for none, another slide,
// or an address a Markdown link cannot hold).
func (pr *pptxReader) linkTarget(id string) string {
	rl, ok := pr.rels[id]
	if !ok || !rl.external {
		return ""
	}
	if webLink(rl.target) || strings.HasPrefix(rl.target, "mailto:") && !strings.ContainsAny(rl.target, " ()<>") {
		return rl.target
	}
	return ""
}

// autoNumMarker is the n-th marker of a:buAutoNum scheme t as PowerPoint shows it: the number
// in its style with its punctuation (arabicPeriod 1., arabicParenR 1), alphaLcParenBoth (a),
// circleNumDbPlain ①).
func autoNumMarker(t string, n int) string {
	core := strings.TrimSuffix(listMarker(autoNumFmt(t), n), ".")
	switch {
	case strings.HasSuffix(t, "ParenBoth"):
		return "(" + core + ")"
	case strings.HasSuffix(t, "ParenR"):
		return core + ")"
	case strings.HasSuffix(t, "Plain"):
		return core
	}
	return core + "."
}

// autoNumFmt maps a:buAutoNum's scheme to the list marker style listMarker knows.
func autoNumFmt(t string) string {
	switch {
	case strings.HasPrefix(t, "alphaLc"):
		return "lowerLetter"
	case strings.HasPrefix(t, "alphaUc"):
		return "upperLetter"
	case strings.HasPrefix(t, "romanLc"):
		return "lowerRoman"
	case strings.HasPrefix(t, "romanUc"):
		return "upperRoman"
	case strings.HasPrefix(t, "circleNum"):
		return "decimalEnclosedCircle"
	case strings.HasPrefix(t, "arabicDb"), strings.HasPrefix(t, "ea1JpnChsDb"):
		return "decimalFullWidth"
	case strings.HasPrefix(t, "ea1JpnKor"):
		return "japaneseCounting"
	}
	return "decimal"
}

// graphic renders a graphic frame: a table, a chart's cached data, a SmartArt diagram's text,
// or nothing.
func (pr *pptxReader) graphic(k *node) string {
	gd := find(k, "graphicData")
	if gd == nil {
		return ""
	}
	if tbl := gd.child("tbl"); tbl != nil {
		return pr.table(tbl)
	}
	if c := gd.child("chart"); c != nil {
		if r, ok := pr.rels[relID(c, "id")]; ok {
			return chartMarkdown(pr.p, r.target)
		}
	}
	if ids := gd.child("relIds"); ids != nil {
		return smartArt(pr.p, pr.rels, ids)
	}
	if ole := find(gd, "oleObj"); ole != nil {
		// an embedded object (a worksheet, a document): the picture of it the slide shows
		var pic *node
		walk(gd, func(n *node) {
			if pic == nil && n.name == "pic" && find(n, "blip") != nil {
				pic = n
			}
		})
		if pic != nil {
			return pr.pictureAlt(pic, ole.a("name"))
		}
	}
	return ""
}

// chartMarkdown reads chart part and renders its cached data ("" when it cannot be read).
func chartMarkdown(p *opc, part string) string {
	root, ok, err := p.xml(part)
	if !ok || err != nil {
		return ""
	}
	cd := readChart(root)
	if cd == nil {
		return ""
	}
	var b strings.Builder
	cd.markdown(&b)
	return b.String()
}

// table renders a:tbl; a merged cell's text repeats in every grid cell it covers.
func (pr *pptxReader) table(tbl *node) string {
	var rows [][]string
	var prev []string
	for _, tr := range tbl.kids {
		if tr.name != "tr" {
			continue
		}
		var row []string
		for _, tc := range tr.kids {
			if tc.name != "tc" {
				continue
			}
			col := len(row)
			var paras []string
			if tb := tc.child("txBody"); tb != nil {
				for _, p := range tb.kids {
					if p.name == "p" {
						if s := strings.TrimSpace(pr.paraMarkdown(p)); s != "" {
							paras = append(paras, s)
						}
					}
				}
			}
			text := strings.Join(paras, "\n")
			switch {
			case tc.a("hMerge") == "1" || tc.a("hMerge") == "true":
				if col > 0 {
					text = row[col-1]
				}
			case tc.a("vMerge") == "1" || tc.a("vMerge") == "true":
				if col < len(prev) {
					text = prev[col]
				}
			}
			row = append(row, text)
		}
		rows = append(rows, row)
		prev = row
	}
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	writeTable(&b, rows)
	return b.String()
}

// picture renders p:pic as an image link to the extracted file, with its alt text.
func (pr *pptxReader) picture(k *node) string { return pr.pictureAlt(k, "") }

// pictureAlt is picture with alt text def when the picture has none of its own.
func (pr *pptxReader) pictureAlt(k *node, def string) string {
	return pr.blipPicture(find(k.child("nvPicPr"), "cNvPr"), find(k.child("blipFill"), "blip"), def)
}

// blipPicture renders the picture blip points at, named and described by the shape's cNvPr
// (def: the alt text when it has none).
func (pr *pptxReader) blipPicture(c, blip *node, def string) string {
	var alt, name string
	if c != nil {
		alt, name = c.a("descr"), c.a("name")
		if alt == "" {
			alt = c.a("title")
		}
	}
	if alt == "" {
		alt = def
	}
	link := ""
	if blip == nil {
		return pr.missingPicture(name, alt, "its image data is missing from the file")
	}
	embed, linked := relID(blip, "embed"), relID(blip, "link")
	if r, ok := pr.rels[embed]; ok && !r.external {
		if !pr.p.has(r.target) {
			return pr.missingPicture(name, alt, "its image data is missing from the file")
		}
		link = pr.assets.add(pr.p, r.target, strings.ReplaceAll(name, " ", ""))
	} else if r, ok := pr.rels[linked]; ok && r.external && webLink(r.target) {
		link = r.target // a picture linked from the web, not stored in the deck
	} else if ok && r.external {
		return pr.missingPicture(name, alt, "it links to a file outside the presentation ("+path.Base(strings.ReplaceAll(r.target, "\\", "/"))+"), which is not stored in it")
	} else {
		// no relationship, or one to nothing the deck holds
		return pr.missingPicture(name, alt, "its image data is missing from the file")
	}
	md := imageMarkdown(alt, link)
	if c != nil {
		if h := c.child("hlinkClick"); h != nil {
			// a picture one clicks to open a page: the picture links there
			if to := pr.linkTarget(relID(h, "id")); to != "" && link != "" {
				md = "[" + md + "](" + to + ")"
			}
		}
	}
	return md
}

// missingPicture is an HTML comment on a picture whose image is not in the file, naming it, with
// its alt text and why: the picture was part of the slide, but there is nothing to show or
// extract, and its name is not text of the slide. The picture is listed for the result's notes.
func (pr *pptxReader) missingPicture(name, alt, why string) string {
	// a comment's text must not close it ("-->") or hold "--"
	safe := func(s string) string {
		s = oneLine(s)
		for strings.Contains(s, "--") {
			s = strings.ReplaceAll(s, "--", "- -")
		}
		return strings.TrimSuffix(s, "-")
	}
	name, alt = safe(name), safe(alt)
	c := "picture"
	if name != "" {
		c += " \"" + name + "\""
	}
	if alt != "" && alt != name {
		c += " (alt text: " + alt + ")"
	}
	label := "slide " + strconv.Itoa(pr.num)
	if name != "" {
		label += ": " + name
	}
	pr.missing = append(pr.missing, label)
	return "<!-- " + c + ": " + why + " -->"
}

// comments renders a slide's comments part (legacy p:cm or modern p188:cm with replies) as
// quoted lines naming the author.
func (pr *pptxReader) comments(b *strings.Builder, part string) {
	root, ok, err := pr.p.xml(part)
	if !ok || err != nil {
		return
	}
	walk(root, func(k *node) {
		if k.name != "cm" && k.name != "reply" {
			return
		}
		var text string
		if t := k.child("text"); t != nil {
			text = escapeInline(t.text)
		} else {
			text = paragraphsText(k.child("txBody"), " ")
		}
		text = oneLine(text)
		if text == "" {
			return
		}
		who := pr.authors[k.a("authorId")]
		if who == "" {
			who = "comment"
		}
		when := k.a("dt")
		if when == "" {
			when = k.a("created")
		}
		if when != "" {
			who += ", " + when
		}
		fmt.Fprintf(b, "> Comment (%s): %s\n\n", escapeInline(oneLine(who)), text)
	})
}

// notes returns the speaker notes of a notes slide: its body placeholder's text.
func (pr *pptxReader) notes(part string) string {
	root, ok, err := pr.p.xml(part)
	if !ok || err != nil {
		return ""
	}
	slideRels := pr.rels
	pr.rels = pr.p.rels(part) // the notes' links are the notes part's relationships
	defer func() { pr.rels = slideRels }()
	var parts []string
	walk(root, func(k *node) {
		if k.name != "sp" {
			return
		}
		ph := find(k.child("nvSpPr"), "ph")
		if ph == nil || phType(ph) != "body" {
			return
		}
		if t := pr.textBody(k.child("txBody"), false); t != "" {
			parts = append(parts, t)
		}
	})
	return strings.Join(parts, "\n\n")
}
