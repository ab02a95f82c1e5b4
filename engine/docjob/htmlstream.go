package docjob

import (
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// largeHTML is the size above which a page is converted by htmlStreamMarkdown: a parsed tree
// costs some 30 times the page's size in memory, the stream a small multiple of it.
const largeHTML = 4 << 20

// htmlStreamMarkdown renders a large page in one pass over its tokens, without building a
// tree: headings, paragraphs, emphasis, links, images, lists, tables (written row by row, the
// first row as header), quotes and code blocks, with the same elements dropped as in
// htmlMarkdown. It does not look for <main> nor tell layout tables from data tables.
func htmlStreamMarkdown(s string) string {
	z := html.NewTokenizer(strings.NewReader(s))
	var out strings.Builder
	out.Grow(len(s) * 3 / 4)
	var line strings.Builder // inline text of the current block or cell
	skip := 0                // depth inside dropped elements
	pre := 0
	code := 0        // open inline code elements: their text is not escaped
	heading := false // the line being read opens with a heading's marker
	type list struct {
		ordered bool
		n       int
	}
	var lists []list
	var quote int
	type tbl struct {
		row   []string
		rows  int
		width int
	}
	var tables []*tbl
	var href []string // open links' targets
	var linkStart []int
	itemPrefix := "" // the indent and marker of the list item being read
	flushItem := func() {
		t := strings.TrimSpace(collapseSpace(line.String()))
		line.Reset()
		if t != "" || itemPrefix != "" {
			out.WriteString(strings.Repeat("> ", quote) + itemPrefix + escapeLineStarts(t) + "\n")
		}
		itemPrefix = ""
	}
	endBlock := func() {
		if len(lists) > 0 {
			flushItem()
			return
		}
		t := strings.TrimSpace(collapseSpace(line.String()))
		line.Reset()
		if heading {
			heading = false // the line opens with the heading's own marker
		} else {
			t = escapeLineStarts(t)
		}
		if t == "" {
			return
		}
		prefix := strings.Repeat("> ", quote)
		out.WriteString(prefix + t + "\n\n")
	}
	voidDropped := func(a atom.Atom) bool {
		switch a {
		case atom.Input, atom.Link, atom.Meta, atom.Embed:
			return true
		}
		return false
	}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			endBlock()
			// Not tidyMarkdown: its copies of a large page would cost more than the stream.
			// Every block ends in a newline, so the text is cut, not copied.
			md := strings.TrimLeft(out.String(), " \t\n")
			if t := strings.TrimRight(md, " \t\n"); t == "" {
				return ""
			} else if len(t) < len(md) {
				md = md[:len(t)+1] // keep one newline at the end
			}
			return md
		case html.TextToken:
			if skip > 0 {
				continue
			}
			if pre > 0 {
				line.Write(z.Text())
			} else if code > 0 {
				line.WriteString(string(z.Text()))
			} else {
				line.WriteString(escapeInline(string(z.Text())))
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			attrs := map[string]string{}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				attrs[string(k)] = string(v)
			}
			end := tt == html.EndTagToken
			n := &html.Node{Type: html.ElementNode, DataAtom: a, Data: string(name)}
			for k, v := range attrs {
				n.Attr = append(n.Attr, html.Attribute{Key: k, Val: v})
			}
			if dropped(n) && !voidDropped(a) && a != atom.Br {
				if tt == html.StartTagToken {
					skip++
				} else if end && skip > 0 {
					skip--
				}
				continue
			}
			if skip > 0 {
				continue
			}
			switch a {
			case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
				endBlock()
				if !end {
					line.WriteString(strings.Repeat("#", int(name[1]-'0')) + " ")
					heading = true
				}
			case atom.P, atom.Div, atom.Section, atom.Article, atom.Header, atom.Footer, atom.Aside, atom.Dl, atom.Dt, atom.Dd,
				atom.Figure, atom.Figcaption, atom.Address, atom.Center, atom.Details, atom.Summary, atom.Fieldset, atom.Caption:
				if len(tables) == 0 {
					endBlock()
				} else {
					line.WriteString(" ")
				}
			case atom.Blockquote:
				endBlock()
				if end && quote > 0 {
					quote--
				} else if !end {
					quote++
				}
			case atom.Hr:
				endBlock()
				out.WriteString("---\n\n")
			case atom.Br:
				if len(tables) > 0 {
					line.WriteString(" ")
				} else {
					line.WriteString("\n")
				}
			case atom.Pre:
				if !end {
					endBlock()
					pre++
					continue
				}
				if pre > 0 {
					pre--
				}
				code := strings.Trim(line.String(), "\n")
				line.Reset()
				fence := "```"
				for strings.Contains(code, fence) {
					fence += "`"
				}
				out.WriteString(fence + "\n" + code + "\n" + fence + "\n\n")
			case atom.Ul, atom.Ol:
				if len(tables) == 0 {
					endBlock()
				}
				if end {
					flushItem()
					if len(lists) > 0 {
						lists = lists[:len(lists)-1]
					}
					if len(lists) == 0 {
						out.WriteString("\n")
					}
				} else {
					start := 1
					if v, err := strconv.Atoi(attrs["start"]); err == nil {
						start = v
					}
					lists = append(lists, list{ordered: a == atom.Ol, n: start})
				}
			case atom.Li:
				if len(tables) > 0 {
					line.WriteString(" ")
					continue
				}
				flushItem()
				if !end && len(lists) > 0 {
					l := &lists[len(lists)-1]
					marker := "* "
					if l.ordered {
						marker = strconv.Itoa(l.n) + ". "
						l.n++
					}
					itemPrefix = strings.Repeat("  ", len(lists)-1) + marker
				}
			case atom.Table:
				if !end {
					endBlock()
					tables = append(tables, &tbl{})
				} else if len(tables) > 0 {
					tables = tables[:len(tables)-1]
					out.WriteString("\n")
				}
			case atom.Tr:
				if len(tables) == 0 {
					continue
				}
				t := tables[len(tables)-1]
				if end || len(t.row) > 0 {
					if len(t.row) > 0 {
						writeStreamRow(&out, t.row, t.rows == 0, &t.width)
						t.rows++
					}
					t.row = t.row[:0]
				}
			case atom.Td, atom.Th:
				if len(tables) == 0 {
					continue
				}
				t := tables[len(tables)-1]
				if !end {
					line.Reset()
					continue
				}
				t.row = append(t.row, strings.TrimSpace(collapseSpace(line.String())))
				line.Reset()
				for k := 1; k < colspan(n); k++ {
					t.row = append(t.row, "")
				}
			case atom.Strong, atom.B:
				line.WriteString("**")
			case atom.Em, atom.I, atom.Cite:
				line.WriteString("*")
			case atom.Code, atom.Kbd, atom.Samp, atom.Tt:
				if pre == 0 {
					line.WriteString("`")
				}
				if !end {
					code++
				} else if code > 0 {
					code--
				}
			case atom.Img:
				if src := shortURI(attrs["src"]); src != "" {
					line.WriteString("![" + escapeInline(oneLine(attrs["alt"])) + "](" + src + ")")
				}
			case atom.A:
				if !end {
					href = append(href, shortURI(unwrapRedirect(strings.TrimSpace(attrs["href"]))))
					linkStart = append(linkStart, line.Len())
					continue
				}
				if len(href) == 0 {
					continue
				}
				h, st := href[len(href)-1], linkStart[len(linkStart)-1]
				href, linkStart = href[:len(href)-1], linkStart[:len(linkStart)-1]
				cur := line.String()
				if st > len(cur) || h == "" || strings.HasPrefix(strings.ToLower(h), "javascript:") {
					continue
				}
				text := oneLine(cur[st:])
				if text == "" {
					continue
				}
				line.Reset()
				line.WriteString(cur[:st] + "[" + text + "](" + strings.ReplaceAll(h, " ", "%20") + ")")
			}
		}
	}
}

// writeStreamRow writes one table row; the first row is the header, and its width is the
// table's (later rows are padded to it; longer ones keep their extra cells).
func writeStreamRow(b *strings.Builder, row []string, header bool, width *int) {
	if header {
		*width = len(row)
	}
	b.WriteByte('|')
	for c := 0; c < max(len(row), *width); c++ {
		b.WriteByte(' ')
		if c < len(row) {
			b.WriteString(cellText(row[c]))
		}
		b.WriteString(" |")
	}
	b.WriteByte('\n')
	if header {
		b.WriteByte('|')
		for c := 0; c < *width; c++ {
			b.WriteString(" --- |")
		}
		b.WriteByte('\n')
	}
}
