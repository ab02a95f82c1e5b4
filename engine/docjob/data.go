package docjob

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"runtime"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
)

// fenced writes text as a fenced code block of language lang, with a fence longer than any
// run of backticks inside.
func fenced(b *strings.Builder, lang, text string) {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	text = strings.TrimRight(text, "\n")
	b.Grow(len(text) + 2*len(fence) + len(lang) + 4)
	b.WriteString(fence + lang + "\n")
	b.WriteString(text) // on its own: a large document is copied once, not twice
	b.WriteString("\n" + fence + "\n\n")
}

// convertJSON renders a JSON file pretty-printed in a fenced block, keys in the file's order, or
// a Jupyter notebook as its cells. JSON that does not parse is a damaged file (E004).
func convertJSON(data []byte, kind Kind) (*Doc, error) {
	src := bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	enc := EncUTF8
	if !utf8.Valid(src) { // UTF-8 (the JSON standard) is read in place; others are decoded
		dt := decodeText(data)
		if !dt.ok {
			return nil, errEncoding(kind)
		}
		src, enc = []byte(strings.TrimPrefix(dt.text, "\uFEFF")), dt.enc
	}
	if !json.Valid(src) {
		return nil, errDamaged(kind, reason("the content is not valid JSON"))
	}
	if kind == KindNotebook {
		return convertNotebook(src, enc)
	}
	var out bytes.Buffer
	out.Grow(len(src) * 2)
	if err := json.Indent(&out, src, "", "  "); err != nil {
		return nil, errDamaged(kind, err)
	}
	text := out.Bytes()
	fence := "```"
	for bytes.Contains(text, []byte(fence)) {
		fence += "`"
	}
	var b strings.Builder
	b.Grow(len(text) + 2*len(fence) + 12)
	b.WriteString(fence + "json\n")
	b.Write(bytes.TrimRight(text, "\n"))
	b.WriteString("\n" + fence + "\n\n")
	return &Doc{Kind: KindJSON, Markdown: b.String(), Method: MethodNative, Encoding: enc, Pages: 1}, nil
}

// notebook is the part of an .ipynb file (nbformat 4) that is read.
type notebook struct {
	Cells []struct {
		Type    string          `json:"cell_type"`
		Source  json.RawMessage `json:"source"`
		Outputs []struct {
			Type      string                     `json:"output_type"`
			Text      json.RawMessage            `json:"text"`
			Data      map[string]json.RawMessage `json:"data"`
			Name      string                     `json:"ename"`
			Value     string                     `json:"evalue"`
			Traceback []string                   `json:"traceback"`
		} `json:"outputs"`
	} `json:"cells"`
	Metadata struct {
		Kernel struct {
			Language string `json:"language"`
		} `json:"kernelspec"`
		Language struct {
			Name string `json:"name"`
		} `json:"language_info"`
	} `json:"metadata"`
	Format *int `json:"nbformat"`
}

// multiline reads a notebook string, which is a string or an array of lines.
func multiline(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var lines []string
	if json.Unmarshal(raw, &lines) == nil {
		return strings.Join(lines, "")
	}
	return ""
}

var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

// convertNotebook renders a notebook's cells in order: Markdown cells as they are, code cells
// as fenced blocks in the kernel's language followed by their text outputs (streams, results,
// errors); image outputs are named, not embedded.
func convertNotebook(src []byte, enc string) (*Doc, error) {
	var nb notebook
	if err := json.Unmarshal(src, &nb); err != nil || nb.Format == nil || nb.Cells == nil {
		return nil, errDamaged(KindNotebook, reason("the file is not a Jupyter notebook (no cells or nbformat)"))
	}
	lang := nb.Metadata.Kernel.Language
	if lang == "" {
		lang = nb.Metadata.Language.Name
	}
	var b strings.Builder
	for _, c := range nb.Cells {
		text := strings.TrimRight(multiline(c.Source), "\n")
		switch c.Type {
		case "markdown":
			if strings.TrimSpace(text) != "" {
				b.WriteString(text + "\n\n")
			}
		case "code":
			if strings.TrimSpace(text) == "" && len(c.Outputs) == 0 {
				continue
			}
			fenced(&b, lang, text)
			for _, o := range c.Outputs {
				var out string
				switch o.Type {
				case "stream":
					out = multiline(o.Text)
				case "execute_result", "display_data":
					if t, ok := o.Data["text/markdown"]; ok {
						b.WriteString(strings.TrimSpace(multiline(t)) + "\n\n")
						continue
					}
					if t, ok := o.Data["text/plain"]; ok {
						out = multiline(t)
					}
					for _, img := range []string{"image/png", "image/jpeg", "image/svg+xml"} {
						if _, ok := o.Data[img]; ok {
							b.WriteString("(" + img + " output)\n\n")
							break
						}
					}
				case "error":
					out = o.Name + ": " + o.Value
					if len(o.Traceback) > 0 {
						out = ansiEscape.ReplaceAllString(strings.Join(o.Traceback, "\n"), "")
					}
				}
				if strings.TrimSpace(out) != "" {
					b.WriteString("Output:\n\n")
					fenced(&b, "", out)
				}
			}
		case "raw":
			if strings.TrimSpace(text) != "" {
				fenced(&b, "", text)
			}
		}
	}
	return &Doc{Kind: KindNotebook, Markdown: strings.TrimSpace(b.String()) + "\n", Method: MethodNative, Encoding: enc, Pages: 1}, nil
}

// xmlDecoder reads XML in the encoding its declaration names (Shift_JIS, EUC-JP, …), leniently
// (HTML's entities, unquoted attributes), as feeds are written.
func xmlDecoder(data []byte) *xml.Decoder {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = false
	d.Entity = xml.HTMLEntity
	d.CharsetReader = charset.NewReaderLabel
	return d
}

// convertXML renders an RSS or Atom feed as a list of its items, and any other XML
// pretty-printed in a fenced block. XML that does not parse is a damaged file (E004). With a
// Markdown file to write, the pretty-printed document is streamed out of memory (spoolXML).
func convertXML(data []byte, kind Kind, file markdownFile) (*Doc, error) {
	if kind == KindFeed {
		// A feed that cannot be read as one is shown as XML; the kind stays the detected one,
		// so the stored result is found again for the same bytes.
		if d, err := convertFeed(data); err == nil {
			return d, nil
		}
	}
	if file != nil {
		if d, err := spoolXML(data, kind, file); !errors.Is(err, errNoSpool) {
			return d, err
		}
		// Not to be written out (a full or read-only disk): made in memory instead.
	}
	// The document is written straight after the fence, so a large one is not copied again.
	var b strings.Builder
	b.Grow(indentedSize(data))
	b.WriteString("```xml\n")
	w := bufio.NewWriterSize(&b, 64<<10)
	if err := indentXML(data, w); err != nil {
		return nil, errDamaged(KindXML, reason("the content is not well-formed XML"))
	}
	w.Flush() // a strings.Builder takes every write
	if body := b.String()[len("```xml\n"):]; strings.Contains(body, "```") {
		var f strings.Builder
		fenced(&f, "xml", body)
		return &Doc{Kind: kind, Markdown: f.String(), Method: MethodNative, Pages: 1}, nil
	}
	// The closing fence goes into the same buffer (md += would copy the whole document).
	b.WriteString("\n```\n")
	return &Doc{Kind: kind, Markdown: b.String(), Method: MethodNative, Pages: 1}, nil
}

// xmlIndent is the indentation of 32 levels, written in one piece.
const xmlIndent = "                                                                "

// gcStep is how much input indentXML reads between collections on a large document.
const gcStep = 4 << 20

// indentedSize estimates the size of data indented by indentXML, a little over, so the
// document is built in one buffer of about its size: one reserved a third larger than needed
// (as a fixed ratio must be for deeply nested files) counts against the collector's goal and
// lets as much garbage pile up on top. It scans for tags only: each starts a line indented by
// its depth, a self-closing one gains its end tag; encodings other than UTF-8 grow by half
// (two-byte Japanese becomes three bytes).
func indentedSize(data []byte) int {
	n, depth := len(data), 0
	for i := 0; i < len(data); {
		j := bytes.IndexByte(data[i:], '<')
		if j < 0 || i+j+1 >= len(data) {
			break
		}
		i += j + 1
		switch data[i] {
		case '/':
			depth = max(depth-1, 0)
			n += 1 + 2*depth
		case '?', '!':
			n += 1 + 2*depth
		default:
			n += 1 + 2*depth
			depth++
			if k := bytes.IndexByte(data[i:], '>'); k > 0 && data[i+k-1] == '/' {
				depth--
				n += k + 2 // <a/> is written <a></a>
			}
		}
	}
	if head := data[:min(len(data), 100)]; bytes.Contains(head, []byte("encoding=")) &&
		!bytes.Contains(bytes.ToLower(head), []byte(`encoding="utf-8"`)) && !bytes.Contains(bytes.ToLower(head), []byte(`encoding='utf-8'`)) {
		n += n / 2
	}
	return n + n/32 + 64
}

// indentXML writes XML to b with one element per line, indented by depth; elements holding
// only text stay on one line. Prefixes are kept as written. b is buffered over the Markdown in
// memory or a file (a concrete type: its small writes are direct calls).
func indentXML(data []byte, b *bufio.Writer) error {
	d := xmlDecoder(data)
	d.Strict = true
	started := false // a line written: the next one starts with a new line
	depth := 0
	open := false // a start tag written, its line not ended
	// text is the element's text so far, joined by spaces; a buffer reused for every element,
	// as every piece below is written straight into b: a large document makes no garbage per
	// token beyond what the decoder allocates.
	var text []byte
	name := func(n xml.Name) {
		if n.Space != "" {
			b.WriteString(n.Space)
			b.WriteByte(':')
		}
		b.WriteString(n.Local)
	}
	esc := func(s []byte) { xml.EscapeText(b, s) } // straight into b
	newline := func() {
		if started {
			b.WriteByte('\n')
		}
		started = true
		for n := 2 * depth; n > 0; n -= len(xmlIndent) {
			b.WriteString(xmlIndent[:min(n, len(xmlIndent))])
		}
	}
	// flushText writes the text read before a child element or a comment: after its parent's
	// start tag, or on a line of its own when it follows an earlier child (mixed content).
	flushText := func() {
		if len(text) > 0 {
			if !open {
				newline()
			}
			esc(text)
		}
		text = text[:0]
	}
	elements := 0
	var collected int64
	for {
		// encoding/xml allocates about four bytes for each byte it reads; paced on a live heap of
		// the input and the output, the collector would let over 100 MB of that garbage pile up
		// during a 50 MB file. A collection every few megabytes read keeps the peak near input
		// plus output (the live heap is two flat buffers, so each one is quick).
		if off := d.InputOffset(); len(data) >= 2*gcStep && off-collected >= gcStep {
			runtime.GC()
			collected = off
		}
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			elements++
			flushText()
			newline()
			b.WriteByte('<')
			name(t.Name)
			for _, a := range t.Attr {
				b.WriteByte(' ')
				name(a.Name)
				b.WriteString(`="`)
				xml.EscapeText(b, []byte(a.Value))
				b.WriteByte('"')
			}
			b.WriteByte('>')
			depth++
			open = true
		case xml.EndElement:
			if depth == 0 {
				return errors.New("end tag without a start tag")
			}
			depth--
			if open {
				esc(text)
			} else {
				if len(text) > 0 {
					newline()
					b.WriteString("  ")
					esc(text)
				}
				newline()
			}
			b.WriteString("</")
			name(t.Name)
			b.WriteByte('>')
			text, open = text[:0], false
		case xml.CharData:
			if s := bytes.TrimSpace(t); len(s) > 0 {
				if len(text) > 0 {
					text = append(text, ' ')
				}
				text = append(text, s...)
			}
		case xml.Comment:
			flushText()
			newline()
			b.WriteString("<!--")
			b.Write(t)
			b.WriteString("-->")
			open = false
		}
		if depth < 0 {
			return errors.New("unbalanced end tag")
		}
	}
	if elements == 0 || depth != 0 {
		return errors.New("no complete root element")
	}
	return nil
}

// feed holds what is read of RSS 2.0, RSS 1.0 (RDF) and Atom.
type feedItem struct {
	Title, Link, Date, Author, Summary, Content string
}

// convertFeed renders a feed as "# its title", its description, then "## item title" with
// date, author and link, and the item's summary and content (HTML rendered as Markdown).
func convertFeed(data []byte) (*Doc, error) {
	d := xmlDecoder(data)
	var title, desc string
	var items []feedItem
	var cur *feedItem
	var path []string
	var text strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			local := strings.ToLower(t.Name.Local)
			path = append(path, local)
			text.Reset()
			if local == "item" || local == "entry" {
				items = append(items, feedItem{})
				cur = &items[len(items)-1]
			}
			if local == "link" && cur != nil {
				for _, a := range t.Attr {
					if a.Name.Local == "href" && (cur.Link == "" || attrVal(t, "rel") == "alternate") {
						cur.Link = a.Value
					}
				}
			}
		case xml.CharData:
			text.Write(t)
		case xml.EndElement:
			if len(path) == 0 {
				continue
			}
			local := path[len(path)-1]
			path = path[:len(path)-1]
			v := strings.TrimSpace(text.String())
			text.Reset()
			if local == "item" || local == "entry" {
				cur = nil
				continue
			}
			parent := ""
			if len(path) > 0 {
				parent = path[len(path)-1]
			}
			if cur == nil {
				if parent == "channel" || parent == "feed" {
					switch local {
					case "title":
						title = v
					case "description", "subtitle":
						desc = v
					}
				}
				continue
			}
			if parent != "item" && parent != "entry" && parent != "author" {
				continue
			}
			switch t.Name.Space + ":" + local {
			case "http://purl.org/rss/1.0/modules/content/:encoded":
				cur.Content = v
				continue
			}
			switch local {
			case "title":
				cur.Title = v
			case "link":
				if v != "" {
					cur.Link = v
				}
			case "pubdate", "published", "updated", "date":
				if cur.Date == "" {
					cur.Date = v
				}
			case "creator", "name":
				cur.Author = v
			case "description", "summary":
				cur.Summary = v
			case "content":
				cur.Content = v
			}
		}
	}
	if title == "" && len(items) == 0 {
		return nil, errors.New("no channel and no items")
	}
	var b strings.Builder
	if title != "" {
		b.WriteString("# " + escapeInline(oneLine(title)) + "\n\n")
	}
	if desc != "" {
		b.WriteString(strings.TrimSpace(feedText(desc)) + "\n\n")
	}
	for _, it := range items {
		b.WriteString("## " + oneLine(feedText(it.Title)) + "\n\n")
		var meta []string
		if it.Date != "" {
			meta = append(meta, "Published: "+escapeInline(it.Date))
		}
		if it.Author != "" {
			meta = append(meta, "Author: "+escapeInline(it.Author))
		}
		if it.Link != "" {
			meta = append(meta, "Link: "+it.Link)
		}
		if len(meta) > 0 {
			b.WriteString(strings.Join(meta, "  \n") + "\n\n")
		}
		if it.Summary != "" && !strings.Contains(it.Content, strings.TrimSpace(it.Summary)) {
			b.WriteString(strings.TrimSpace(feedText(it.Summary)) + "\n\n")
		}
		if it.Content != "" {
			b.WriteString(strings.TrimSpace(feedText(it.Content)) + "\n\n")
		}
	}
	return &Doc{Kind: KindFeed, Markdown: strings.TrimSpace(b.String()) + "\n", Method: MethodNative, Pages: 1}, nil
}

// feedText renders a feed field that may hold HTML (escaped or in CDATA) as Markdown, plain
// text escaped.
func feedText(s string) string {
	if strings.Contains(s, "<") && strings.Contains(s, ">") {
		return htmlMarkdown(s, false)
	}
	return EscapeMarkdown(s)
}

func attrVal(t xml.StartElement, local string) string {
	for _, a := range t.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}
