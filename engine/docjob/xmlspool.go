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
)

// This file streams a large XML document's Markdown to a temporary file as it is made, for the
// conversion handler, which copies it to the Markdown file: a 50 MB document nested ten deep
// indents to 170 MB, which held in memory beside the input took the conversion over 300 MB.

// spooled is a document's Markdown in a temporary file: head, the file, tail.
type spooled struct {
	f          *os.File
	head, tail string
	chars      int // characters of head, the file and tail
}

// errNoSpool is returned (wrapped) by spoolXML when no temporary file can be written; the
// document is then made in memory, as before.
var errNoSpool = errors.New("no temporary file for the Markdown")

// spoolXML is convertXML writing the pretty-printed document to a temporary file. The fence
// is chosen once the document is written, from the longest run of backticks in it, as fenced
// chooses it, so the Markdown is byte for byte the one convertXML returns.
func spoolXML(data []byte, kind Kind) (*Doc, error) {
	f, err := os.CreateTemp("", "jobdesk-xml-*.md")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoSpool, err)
	}
	sp := &spooled{f: f}
	st := &mdStats{w: f}
	w := bufio.NewWriterSize(st, 64<<10)
	if err := indentXML(data, w); err != nil {
		sp.release()
		return nil, errDamaged(KindXML, reason("the content is not well-formed XML"))
	}
	if err := w.Flush(); err != nil {
		sp.release()
		return nil, fmt.Errorf("%w: %v", errNoSpool, err)
	}
	sp.head, sp.tail = "```xml\n", "\n```\n"
	if st.longest >= 3 { // as fenced writes it
		fence := strings.Repeat("`", st.longest+1)
		sp.head, sp.tail = fence+"xml\n", "\n"+fence+"\n\n"
	}
	sp.chars = len(sp.head) + st.chars.end() + len(sp.tail)
	return &Doc{Kind: kind, spooled: sp, Method: MethodNative, Pages: 1}, nil
}

// reader reads the Markdown from its start.
func (sp *spooled) reader() (io.Reader, error) {
	if _, err := sp.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.MultiReader(strings.NewReader(sp.head), sp.f, strings.NewReader(sp.tail)), nil
}

// release closes and removes the temporary file.
func (sp *spooled) release() {
	sp.f.Close()
	os.Remove(sp.f.Name())
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
