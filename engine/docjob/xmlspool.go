package docjob

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"jobdesk/engine/blob"
)

// This file streams a large XML document's Markdown out of memory as it is made, for the
// conversion handler: a 50 MB document nested ten deep indents to 170 MB, which held in memory
// beside the input took the conversion over 300 MB. Where the input holds no backtick, the
// fence is known before the document is made and the Markdown goes straight into its file;
// otherwise the document goes to a temporary file first, and the fence is chosen from the
// longest run of backticks written, as fenced chooses it. Either way the Markdown is byte for
// byte the one convertXML returns in memory.

// markdownFile starts writing a conversion's Markdown file (the handler's output); nil where
// the Markdown is returned in memory.
type markdownFile func() (blob.Writer, error)

// spooled is a document's Markdown made out of memory: written whole into the Markdown file
// (out, for the handler to commit), or into a temporary file (f) that goes between head and
// tail.
type spooled struct {
	out        blob.Writer
	f          *os.File
	head, tail string
	chars      int // characters of the whole Markdown
}

// errNoSpool is returned (wrapped) by spoolXML when the Markdown cannot be written out of
// memory; the document is then made in memory, as before.
var errNoSpool = errors.New("the Markdown cannot be streamed")

// spoolXML is convertXML writing the pretty-printed document out of memory: into the Markdown
// file that file starts, or into a temporary file.
func spoolXML(data []byte, kind Kind, file markdownFile) (_ *Doc, err error) {
	sp := &spooled{head: "```xml\n", tail: "\n```\n"}
	done := false
	defer func() {
		if !done { // failed, or panicked (recovered by ConvertKind)
			sp.release()
		}
	}()
	var dst io.Writer
	if backtickFree(data) {
		if sp.out, err = file(); err != nil {
			return nil, fmt.Errorf("%w: %v", errNoSpool, err)
		}
		if _, err := io.WriteString(sp.out, sp.head); err != nil {
			return nil, fmt.Errorf("%w: %v", errNoSpool, err)
		}
		dst = sp.out
	} else {
		if sp.f, err = os.CreateTemp("", "jobdesk-xml-*.md"); err != nil {
			return nil, fmt.Errorf("%w: %v", errNoSpool, err)
		}
		dst = sp.f
	}
	st := &mdStats{w: dst}
	w := bufio.NewWriterSize(st, 64<<10)
	if err := indentXML(data, w); err != nil {
		return nil, errDamaged(KindXML, reason("the content is not well-formed XML"))
	}
	if err := w.Flush(); err != nil {
		return nil, fmt.Errorf("%w: %v", errNoSpool, err)
	}
	if st.longest >= 3 { // as fenced writes it
		if sp.out != nil {
			return nil, fmt.Errorf("%w: a run of backticks in a document read as holding none", errNoSpool)
		}
		fence := strings.Repeat("`", st.longest+1)
		sp.head, sp.tail = fence+"xml\n", "\n"+fence+"\n\n"
	}
	if sp.out != nil {
		if _, err := io.WriteString(sp.out, sp.tail); err != nil {
			return nil, fmt.Errorf("%w: %v", errNoSpool, err)
		}
	}
	sp.chars = len(sp.head) + st.chars.end() + len(sp.tail)
	done = true
	return &Doc{Kind: kind, spooled: sp, Method: MethodNative, Pages: 1}, nil
}

// backtickFree reports whether no text read from XML data can hold a backtick: data has no
// byte "`" and no character reference to one ("&#96;", "&#x60;"), and is not UTF-16 (no NUL).
// A backtick is that byte in every other encoding a declaration may name; the byte also
// standing inside some two-byte characters only makes the answer no more often. No entity
// the decoder knows (xml.HTMLEntity) stands for a backtick.
func backtickFree(data []byte) bool {
	if bytes.IndexByte(data, '`') >= 0 || bytes.IndexByte(data, 0) >= 0 {
		return false
	}
	for rest := data; ; {
		i := bytes.Index(rest, []byte("&#"))
		if i < 0 {
			return true
		}
		rest = rest[i+2:]
		base := 10
		if len(rest) > 0 && rest[0]|0x20 == 'x' {
			base, rest = 16, rest[1:]
		}
		v := 0
		for len(rest) > 0 && v <= utf8.MaxRune {
			d, ok := hexDigit(rest[0])
			if !ok || int(d) >= base {
				break
			}
			v, rest = v*base+int(d), rest[1:]
		}
		if v == '`' {
			return false
		}
	}
}

// reader reads the Markdown from its start (a temporary file's).
func (sp *spooled) reader() (io.Reader, error) {
	if sp.f == nil {
		return nil, errors.New("the Markdown was written to its file")
	}
	if _, err := sp.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.MultiReader(strings.NewReader(sp.head), sp.f, strings.NewReader(sp.tail)), nil
}

// release discards what is not committed: the Markdown file's writer, the temporary file.
func (sp *spooled) release() {
	if sp.out != nil {
		sp.out.Abort()
	}
	if sp.f != nil {
		sp.f.Close()
		os.Remove(sp.f.Name())
	}
}

// markdownReader reads d's Markdown, from its temporary file when it was streamed to one.
func (d *Doc) markdownReader() (io.Reader, error) {
	if d.spooled != nil {
		return d.spooled.reader()
	}
	// Not a *strings.Reader: its WriteTo would hand a large document to the writer as one
	// []byte, a second copy.
	return struct{ io.Reader }{strings.NewReader(d.Markdown)}, nil
}

// chars is the number of characters of d's Markdown.
func (d *Doc) chars() int {
	if d.spooled != nil {
		return d.spooled.chars
	}
	return utf8.RuneCountInString(d.Markdown)
}

// release removes the temporary file of a Markdown streamed to one; a no-op otherwise.
func (d *Doc) release() {
	if d != nil && d.spooled != nil {
		d.spooled.release()
	}
}

// mdStats passes writes on to w and keeps what the fence and the result need of them: the
// longest run of backticks and the characters.
type mdStats struct {
	w       io.Writer
	run     int // backticks at the end of what was written
	longest int
	chars   runeCounter
}

func (s *mdStats) Write(p []byte) (int, error) {
	s.chars.write(p)
	for q := p; len(q) > 0; {
		j := bytes.IndexByte(q, '`')
		if j != 0 {
			s.run = 0
		}
		if j < 0 {
			break
		}
		k := j
		for k < len(q) && q[k] == '`' {
			k++
		}
		s.run += k - j
		s.longest = max(s.longest, s.run)
		q = q[k:]
	}
	return s.w.Write(p)
}

// runeCounter counts the characters of a stream written in pieces as utf8.RuneCount counts
// those of the whole: a character cut between two writes counts once, invalid bytes one each.
type runeCounter struct {
	n    int
	part []byte // an incomplete character at the end of the last write
}

func (c *runeCounter) write(p []byte) {
	if len(c.part) > 0 {
		// Finish the characters begun in part with p's first bytes (at most three are needed).
		var buf [2 * utf8.UTFMax]byte
		b := append(append(buf[:0], c.part...), p[:min(len(p), utf8.UTFMax-1)]...)
		i := 0
		for i < len(c.part) {
			if !utf8.FullRune(b[i:]) { // p was shorter than the character
				c.part = append(c.part[:0], b[i:]...)
				return
			}
			_, size := utf8.DecodeRune(b[i:])
			c.n++
			i += size
		}
		p = p[i-len(c.part):]
		c.part = c.part[:0]
	}
	// Hold back a character cut off at the end: it starts at the last byte that is not a
	// continuation byte, within the last three bytes.
	cut := len(p)
	for k := len(p) - 1; k >= 0 && k >= len(p)-(utf8.UTFMax-1); k-- {
		if utf8.RuneStart(p[k]) {
			if !utf8.FullRune(p[k:]) {
				cut = k
			}
			break
		}
	}
	c.n += utf8.RuneCount(p[:cut])
	c.part = append(c.part, p[cut:]...)
}

// end is the count of the whole stream.
func (c *runeCounter) end() int {
	n := c.n + utf8.RuneCount(c.part)
	c.part = c.part[:0]
	return n
}
