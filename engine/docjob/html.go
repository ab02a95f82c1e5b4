package docjob

import (
	"bytes"
	"encoding/base64"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// decodeHTML returns an HTML document's text as UTF-8 and the encoding it was read in: a BOM
// wins, then bytes that are valid UTF-8, then the charset the document declares (<meta
// charset>, http-equiv), then DecodeText's rule (CP932, EUC-JP). ok is false when nothing reads
// the bytes cleanly.
func decodeHTML(data []byte) (text, enc string, ok bool) {
	head := data
	if len(head) > 1024 {
		head = head[:1024]
	}
	e, name, certain := charset.DetermineEncoding(head, "")
	switch {
	case certain:
		b, err := e.NewDecoder().Bytes(data)
		return string(b), name, err == nil
	case utf8.Valid(data):
		// The page's bytes are never changed once read, so the text shares them instead of
		// copying a page of up to MaxFileSize.
		return unsafe.String(unsafe.SliceData(data), len(data)), EncUTF8, true
	case name != "utf-8" && (name != "windows-1252" || bytes.Contains(bytes.ToLower(head), []byte("charset"))):
		if b, err := e.NewDecoder().Bytes(data); err == nil {
			return string(b), name, true
		}
	}
	dt := decodeText(data)
	return dt.text, dt.enc, dt.ok || dt.bad > 0
}

// convertHTML renders an HTML page as Markdown (see htmlMarkdown).
func convertHTML(data []byte) (*Doc, error) {
	s, enc, ok := decodeHTML(data)
	if !ok {
		return nil, errEncoding(KindHTML)
	}
	data = nil // the text is all that is read from here on
	md := htmlMarkdown(s, true)
	return &Doc{Kind: KindHTML, Markdown: md, Method: MethodNative, Encoding: enc, Pages: 1}, nil
}

// htmlMarkdown renders HTML text as Markdown: headings, paragraphs, emphasis, links with their
// titles, images with their alt text, lists (nested), block quotes, code, and tables. Scripts,
// styles, forms, navigation, hidden elements and the page chrome around a <main> element are
// dropped; data: URIs are cut to their type; links through a search engine's redirect are
// written as their target. withTitle puts the <title> first as a heading when the content has
// no level-1 heading of its own.
func htmlMarkdown(s string, withTitle bool) string {
	if len(s) > largeHTML {
		return htmlStreamMarkdown(s)
	}
	doc, err := html.Parse(strings.NewReader(s))
	if err != nil {
		return htmlPlainText(s) // nested deeper than the parser allows: keep the text
	}
	root := doc
	if m := findMain(doc); m != nil {
		root = m
	}
	w := &mdRender{}
	body := strings.ReplaceAll(w.block(root, 0), blockMark, "")
	out := tidyMarkdown(body)
	if withTitle {
		if t := findTitle(doc); t != "" && !hasH1(out) {
			out = "# " + escapeInline(t) + "\n\n" + out
		}
	}
	return out
}

// blockMark encloses a block element's Markdown met inside inline content (a <div> in a <span>):
// escapeTextLines leaves its lines as they are; htmlMarkdown removes the marks.
const blockMark = "\x01"

// escapeTextLines escapes the line starts of a paragraph's inline Markdown (its text runs were
// escaped as they were read), skipping the blocks between blockMarks, which are Markdown already,
// and removes the marks.
func escapeTextLines(t string) string {
	if !strings.Contains(t, blockMark) {
		return escapeLineStarts(t)
	}
	parts := strings.Split(t, blockMark)
	for i := 0; i < len(parts); i += 2 {
		parts[i] = escapeLineStarts(parts[i])
	}
	return strings.Join(parts, "") // the marks are spent: the paragraph is Markdown now
}

// htmlPlainText is the text of markup the parser refuses, one block per text run, without
// scripts and styles.
func htmlPlainText(s string) string {
	z := html.NewTokenizer(strings.NewReader(s))
	var b strings.Builder
	skip := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return tidyMarkdown(b.String())
		case html.StartTagToken:
			if n, _ := z.TagName(); string(n) == "script" || string(n) == "style" {
				skip++
			}
		case html.EndTagToken:
			if n, _ := z.TagName(); (string(n) == "script" || string(n) == "style") && skip > 0 {
				skip--
			}
		case html.TextToken:
			if t := oneLine(string(z.Text())); t != "" && skip == 0 {
				b.WriteString(EscapeMarkdown(t) + "\n\n")
			}
		}
	}
}

// findMain returns the one <main> (or role="main") element of a page, or nil.
func findMain(doc *html.Node) *html.Node {
	var found []*html.Node
	walkNodes(doc, func(n *html.Node) bool {
		if n.Type == html.ElementNode && (n.DataAtom == atom.Main || attr(n, "role") == "main") {
			found = append(found, n)
			return false
		}
		return true
	})
	if len(found) == 1 {
		return found[0]
	}
	return nil
}

func findTitle(doc *html.Node) string {
	var t string
	walkNodes(doc, func(n *html.Node) bool {
		if t != "" {
			return false
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Title {
			t = strings.Join(strings.Fields(htmlText(n)), " ")
			return false
		}
		return n.DataAtom != atom.Body && n.DataAtom != atom.Svg
	})
	return t
}

func hasH1(md string) bool {
	return strings.HasPrefix(md, "# ") || strings.Contains(md, "\n# ")
}

// walkNodes visits n and its descendants depth first without recursion (pages nest deeply);
// f returns false to skip a node's children.
func walkNodes(n *html.Node, f func(*html.Node) bool) {
	stack := []*html.Node{n}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !f(n) {
			continue
		}
		for c := n.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, c)
		}
	}
}

// textOf is the text of n and its descendants.
func htmlText(n *html.Node) string {
	var b strings.Builder
	walkNodes(n, func(n *html.Node) bool {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		return n.Type != html.ElementNode || !dropped(n)
	})
	return b.String()
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

// dropped reports elements that are no content: code, styles, forms and their controls,
// navigation, hidden elements.
func dropped(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Head, atom.Nav, atom.Form, atom.Button,
		atom.Input, atom.Select, atom.Textarea, atom.Label, atom.Svg, atom.Canvas, atom.Iframe, atom.Object,
		atom.Embed, atom.Dialog, atom.Menu, atom.Audio, atom.Video, atom.Map, atom.Link, atom.Meta:
		return true
	}
	switch attr(n, "role") {
	case "navigation", "search", "menu", "menubar", "dialog", "button":
		return true
	}
	if hasAttr(n, "hidden") || attr(n, "aria-hidden") == "true" {
		return true
	}
	st := strings.ReplaceAll(strings.ToLower(attr(n, "style")), " ", "")
	return strings.Contains(st, "display:none") || strings.Contains(st, "visibility:hidden")
}

// mdRender renders a DOM subtree. block returns Markdown whose blocks are separated by blank
// lines; inline returns the text of inline content on one logical line.
type mdRender struct{}

const maxHTMLDepth = 256

func isBlockAtom(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Header, atom.Footer, atom.Aside,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Ul, atom.Ol, atom.Li, atom.Dl, atom.Dt, atom.Dd,
		atom.Table, atom.Blockquote, atom.Pre, atom.Hr, atom.Figure, atom.Figcaption, atom.Address,
		atom.Body, atom.Html, atom.Center, atom.Details, atom.Summary, atom.Fieldset, atom.Caption,
		atom.Tr, atom.Td, atom.Th, atom.Tbody, atom.Thead, atom.Tfoot:
		return true
	}
	return false
}

// block renders n's children as blocks.
func (w *mdRender) block(n *html.Node, depth int) string {
	var b strings.Builder
	var line strings.Builder // inline content waiting for the next block
	flush := func() {
		if t := strings.TrimSpace(line.String()); t != "" {
			b.WriteString("\n\n")
			b.WriteString(escapeTextLines(t))
			b.WriteString("\n\n")
		}
		line.Reset()
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && isBlockAtom(c.DataAtom) && !dropped(c) {
			flush()
			b.WriteString(w.element(c, depth+1))
			continue
		}
		line.WriteString(w.inline(c, depth+1))
	}
	flush()
	return b.String()
}

// element renders one block element.
func (w *mdRender) element(n *html.Node, depth int) string {
	if depth > maxHTMLDepth {
		return "\n\n" + EscapeMarkdown(strings.Join(strings.Fields(htmlText(n)), " ")) + "\n\n"
	}
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		level := int(n.Data[1] - '0')
		t := oneLine(w.inlineText(n, depth))
		if t == "" {
			return ""
		}
		return "\n\n" + strings.Repeat("#", level) + " " + t + "\n\n"
	case atom.Hr:
		return "\n\n---\n\n"
	case atom.Pre:
		lang := ""
		walkNodes(n, func(c *html.Node) bool {
			for _, cl := range strings.Fields(attr(c, "class")) {
				if l, ok := strings.CutPrefix(cl, "language-"); ok && lang == "" {
					lang = l
				}
			}
			return lang == ""
		})
		code := strings.Trim(htmlText(n), "\n")
		fence := "```"
		for strings.Contains(code, fence) {
			fence += "`"
		}
		return "\n\n" + fence + lang + "\n" + code + "\n" + fence + "\n\n"
	case atom.Blockquote:
		inner := tidyMarkdown(w.block(n, depth))
		if inner == "" {
			return ""
		}
		lines := strings.Split(strings.TrimRight(inner, "\n"), "\n")
		for i, l := range lines {
			lines[i] = strings.TrimRight("> "+l, " ")
		}
		return "\n\n" + strings.Join(lines, "\n") + "\n\n"
	case atom.Ul, atom.Ol:
		return "\n\n" + w.list(n, depth) + "\n\n"
	case atom.Table:
		return w.table(n, depth)
	case atom.Dt:
		t := oneLine(w.inlineText(n, depth))
		if t == "" {
			return ""
		}
		return "\n\n**" + t + "**\n\n"
	}
	return w.block(n, depth)
}

// list renders a <ul> or <ol>: "* " or "N. " items, nested lists indented under their item.
func (w *mdRender) list(n *html.Node, depth int) string {
	ordered := n.DataAtom == atom.Ol
	num := 1
	if s, err := strconv.Atoi(attr(n, "start")); err == nil {
		num = s
	}
	var items []string
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode || dropped(c) {
			continue
		}
		var body string
		if c.DataAtom == atom.Li {
			body = tidyMarkdown(w.block(c, depth+1))
		} else if c.DataAtom == atom.Ul || c.DataAtom == atom.Ol {
			body = w.list(c, depth+1)
			if len(items) > 0 {
				items[len(items)-1] += "\n" + indent(body, "  ")
				continue
			}
		} else {
			body = tidyMarkdown(w.block(c, depth+1))
		}
		marker := "* "
		if ordered {
			marker = strconv.Itoa(num) + ". "
			num++
		}
		pad := strings.Repeat(" ", len(marker))
		body = strings.ReplaceAll(strings.TrimSpace(body), "\n\n", "\n")
		items = append(items, marker+indentRest(body, pad))
	}
	return strings.Join(items, "\n")
}

func indent(s, pad string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "\n")
}

func indentRest(s, pad string) string {
	first, rest, ok := strings.Cut(s, "\n")
	if !ok {
		return s
	}
	return first + "\n" + indent(rest, pad)
}

// table renders a table as a Markdown table (the first row as header; cells spanning columns
// repeated empty). A table that only lays a page out (one column, or tables inside it) is
// rendered as the blocks of its cells instead.
func (w *mdRender) table(n *html.Node, depth int) string {
	var rows [][]*html.Node
	nested := false
	var caption string
	var collect func(t *html.Node)
	collect = func(t *html.Node) {
		for c := t.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.DataAtom {
			case atom.Caption:
				caption = oneLine(w.inlineText(c, depth))
			case atom.Thead, atom.Tbody, atom.Tfoot:
				collect(c)
			case atom.Tr:
				var cells []*html.Node
				for d := c.FirstChild; d != nil; d = d.NextSibling {
					if d.Type == html.ElementNode && (d.DataAtom == atom.Td || d.DataAtom == atom.Th) {
						cells = append(cells, d)
						walkNodes(d, func(x *html.Node) bool {
							if x.DataAtom == atom.Table {
								nested = true
							}
							return !nested
						})
					}
				}
				rows = append(rows, cells)
			}
		}
	}
	collect(n)
	width := 0
	for _, r := range rows {
		span := 0
		for _, c := range r {
			span += colspan(c)
		}
		width = max(width, span)
	}
	if nested || width < 2 {
		var b strings.Builder
		for _, r := range rows {
			for _, c := range r {
				b.WriteString(w.block(c, depth+1))
			}
		}
		return b.String()
	}
	var grid [][]string
	for _, r := range rows {
		var out []string
		for _, c := range r {
			out = append(out, cellMarkdown(w.block(c, depth+1)))
			for k := 1; k < colspan(c); k++ {
				out = append(out, "")
			}
		}
		grid = append(grid, out)
	}
	var b strings.Builder
	b.WriteString("\n\n")
	if caption != "" {
		b.WriteString(caption + "\n\n")
	}
	writeTable(&b, grid)
	b.WriteString("\n")
	return b.String()
}

func colspan(n *html.Node) int {
	if s, err := strconv.Atoi(attr(n, "colspan")); err == nil && s > 1 && s < 100 {
		return s
	}
	return 1
}

// inlineText is n's inline content on its own (a heading's, a link's, a caption's text), without
// the blockMarks of blocks met inside it: it is not a paragraph whose lines are escaped later.
func (w *mdRender) inlineText(n *html.Node, depth int) string {
	return strings.ReplaceAll(w.inlineChildren(n, depth), blockMark, "")
}

func (w *mdRender) inlineChildren(n *html.Node, depth int) string {
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(w.inline(c, depth+1))
	}
	return b.String()
}

// collapseSpace turns each run of HTML white space into one space, without a regular
// expression: it runs for every text node.
func collapseSpace(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\t', '\r', '\n', '\f':
			clean = false
		case ' ':
			if i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == '\t' || s[i+1] == '\r' || s[i+1] == '\n' || s[i+1] == '\f') {
				clean = false
			}
		}
		if !clean {
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\r', '\n', '\f':
			if !space {
				b.WriteByte(' ')
			}
			space = true
		default:
			b.WriteByte(c)
			space = false
		}
	}
	return b.String()
}

// cellMarkdown is a table cell's Markdown on as few lines as it needs: its blocks' lines
// trimmed, blank ones dropped.
func cellMarkdown(s string) string {
	if !strings.Contains(s, "\n") {
		return strings.TrimSpace(s)
	}
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// inline renders inline content: text with whitespace collapsed, emphasis, code, links,
// images and line breaks. A block element met inside inline content (a <div> in a <span>) is
// rendered as a block.
func (w *mdRender) inline(n *html.Node, depth int) string {
	switch n.Type {
	case html.TextNode:
		return escapeInline(collapseSpace(n.Data))
	case html.ElementNode:
	default:
		return ""
	}
	if dropped(n) {
		return ""
	}
	if depth > maxHTMLDepth {
		return " " + escapeInline(strings.Join(strings.Fields(htmlText(n)), " ")) + " "
	}
	if isBlockAtom(n.DataAtom) {
		// marked so that the paragraph around it escapes only its own text's line starts
		return blockMark + w.element(n, depth) + blockMark
	}
	switch n.DataAtom {
	case atom.Br:
		return "\n"
	case atom.Img:
		alt := oneLine(attr(n, "alt"))
		src := shortURI(attr(n, "src"))
		if src == "" {
			return escapeInline(alt)
		}
		return "![" + escapeInline(alt) + "](" + src + ")"
	case atom.Strong, atom.B:
		return wrapInline(w.inlineChildren(n, depth), "**")
	case atom.Em, atom.I, atom.Cite:
		return wrapInline(w.inlineChildren(n, depth), "*")
	case atom.Del, atom.S, atom.Strike:
		return wrapInline(w.inlineChildren(n, depth), "~~")
	case atom.Code, atom.Kbd, atom.Samp, atom.Tt:
		t := oneLine(htmlText(n))
		if t == "" {
			return ""
		}
		tick := "`"
		for strings.Contains(t, tick) {
			tick += "`"
		}
		return tick + t + tick
	case atom.A:
		inner := w.inlineText(n, depth)
		href := strings.TrimSpace(attr(n, "href"))
		text := oneLine(inner)
		if href == "" || strings.HasPrefix(strings.ToLower(href), "javascript:") || text == "" {
			return inner
		}
		href = shortURI(unwrapRedirect(href))
		link := "[" + text + "](" + strings.ReplaceAll(href, " ", "%20")
		if t := oneLine(attr(n, "title")); t != "" {
			link += " \"" + strings.ReplaceAll(t, "\"", "\\\"") + "\""
		}
		lead, trail := "", ""
		if strings.HasPrefix(inner, " ") {
			lead = " "
		}
		if strings.HasSuffix(inner, " ") {
			trail = " "
		}
		return lead + link + ")" + trail
	case atom.Ruby:
		var b strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.DataAtom == atom.Rt || c.DataAtom == atom.Rp {
				continue
			}
			b.WriteString(w.inline(c, depth+1))
		}
		return b.String()
	}
	return w.inlineChildren(n, depth)
}

// wrapInline puts a marker around inline text, keeping the spaces at its ends outside.
func wrapInline(s, mark string) string {
	t := strings.TrimSpace(s)
	if t == "" {
		return s
	}
	lead, trail := "", ""
	if strings.HasPrefix(s, " ") || strings.HasPrefix(s, "\n") {
		lead = " "
	}
	if strings.HasSuffix(s, " ") || strings.HasSuffix(s, "\n") {
		trail = " "
	}
	return lead + mark + t + mark + trail
}

// shortURI cuts a data: URI to its media type ("data:image/png;base64..."): the bytes are no
// text to read.
func shortURI(u string) string {
	if strings.HasPrefix(strings.ToLower(u), "data:") {
		if i := strings.IndexByte(u, ','); i >= 0 {
			return u[:i] + "..."
		}
	}
	return u
}

// unwrapRedirect returns the target of a search engine's redirect link (Bing's /ck/a?…&u=a1…
// with the target in URL-safe base64, Google's /url?q=…), else href unchanged.
func unwrapRedirect(href string) string {
	u, err := url.Parse(href)
	if err != nil || u.RawQuery == "" {
		return href
	}
	q := u.Query()
	switch {
	case strings.HasSuffix(u.Host, "bing.com") && strings.HasPrefix(u.Path, "/ck/"):
		if v := q.Get("u"); strings.HasPrefix(v, "a1") {
			v = v[2:]
			if b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(v, "=")); err == nil {
				if t := string(b); isWebURL(t) {
					return t
				} else if strings.HasPrefix(t, "/") && !strings.HasPrefix(t, "//") && u.Host != "" {
					return u.Scheme + "://" + u.Host + t
				}
			}
		}
	case (u.Host == "" || strings.Contains(u.Host, "google.")) && u.Path == "/url":
		for _, k := range []string{"q", "url"} {
			if v := q.Get(k); isWebURL(v) {
				return v
			}
		}
	}
	return href
}

func isWebURL(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
}

var blankRun = regexp.MustCompile(`\n{3,}`)

// tidyMarkdown trims the spaces at line ends and at the start of lines outside code fences,
// and leaves at most one blank line between blocks.
func tidyMarkdown(s string) string {
	lines := strings.Split(s, "\n")
	fence := ""
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if fence != "" {
			if strings.HasPrefix(t, fence) && strings.Trim(t, "`") == "" {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") {
			fence = t[:len(t)-len(strings.TrimLeft(t, "`"))]
		}
		if strings.HasPrefix(l, " ") && (strings.HasPrefix(t, "* ") || isOrderedItem(t) || strings.HasPrefix(t, "> ")) && i > 0 && strings.TrimSpace(lines[i-1]) != "" {
			lines[i] = strings.TrimRight(l, " \t") // a nested item keeps its indent
			continue
		}
		lines[i] = strings.TrimRight(strings.TrimLeft(l, " \t"), " \t")
		if strings.HasPrefix(l, "  ") && i > 0 && strings.TrimSpace(lines[i-1]) != "" && lines[i] != "" {
			lines[i] = strings.TrimRight(l, " \t") // continuation of a list item
		}
	}
	out := strings.TrimSpace(blankRun.ReplaceAllString(strings.Join(lines, "\n"), "\n\n"))
	if out == "" {
		return ""
	}
	return out + "\n"
}

func isOrderedItem(t string) bool {
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && strings.HasPrefix(t[i:], ". ")
}
