package docjob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
)

// nestedXML is a document of records nested ten deep with everything the indenter writes:
// attributes that need escaping, Japanese text, text between child elements (mixed content),
// comments, CDATA, self-closing elements, and, with backticks, runs of "`" in text and
// attributes (the fence must be longer than the longest run).
func nestedXML(records int, backticks bool) []byte {
	var b bytes.Buffer
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- 先頭 -->\n<root xmlns:x=\"urn:x\">")
	for i := range records {
		tick := ""
		if backticks && i%7 == 3 {
			tick = strings.Repeat("`", 3+i%5)
		}
		fmt.Fprintf(&b, `<a n="%d"><b>前<c><d x:k="&lt;%d&amp;&quot;">`, i, i)
		fmt.Fprintf(&b, "<e><f><g><h><i><j k=\"%s\">値 %d %s</j><j/>間<!-- 注 %d --></i></h></g>", tick, i, tick, i)
		fmt.Fprintf(&b, "<![CDATA[生の <cdata> %s]]></f>後</e></d></c>\n  </b> 終 </a>", tick)
	}
	b.WriteString("</root>\n")
	return b.Bytes()
}

// writeXMLFile writes data as a file named name in a folder of its own and returns its path.
func writeXMLFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// handleXMLFile converts the file at path through the conversion handler, forced, writing into the
// data folder "data" beside it.
func handleXMLFile(t *testing.T, path string) (Result, error) {
	t.Helper()
	raw, _ := json.Marshal(Input{Path: path, Force: true})
	ctx := job.WithInfo(context.Background(), job.Info{ID: 1, Output: filepath.Join(filepath.Dir(path), "data")})
	out, err := NewConverter(nil, blob.Local{}).Handle(ctx, raw, job.Discard)
	var res Result
	if err == nil {
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
	}
	return res, err
}

// TestXMLStreamedMarkdownUnchanged: the conversion handler streams a large XML document's
// Markdown to its file instead of holding it; the file is byte for byte the Markdown Convert
// returns, which is the one the converter wrote before it streamed (the digests were taken
// then), and the character count is the Markdown's.
func TestXMLStreamedMarkdownUnchanged(t *testing.T) {
	for _, tc := range []struct {
		name      string
		backticks bool
		digest    string
	}{
		{"plain", false, "5a6e5499a5f09d79040c591c2b70a0bbeeb65d7181fbc577b3aee76fadc97899"},
		{"fenced", true, "f4f6a63e2233c4c10c4100787b7cf7c23d89e81270320f54d2b57afaedd6a351"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := nestedXML(3000, tc.backticks)
			d, err := Convert(context.Background(), data, tc.name+".xml", Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%x", sha256.Sum256([]byte(d.Markdown))); got != tc.digest {
				t.Errorf("the Markdown changed: sha256 %s, was %s; it starts\n%.600s", got, tc.digest, d.Markdown)
			}
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp) // where a document with backticks is streamed to first
			mdPath := filepath.Join(t.TempDir(), "direct.md")
			sd, err := convertSafely(context.Background(), data, tc.name+".xml", KindXML, Options{}, func() (blob.Writer, error) {
				return blob.Local{}.Create(context.Background(), mdPath)
			})
			if err != nil {
				t.Fatal(err)
			}
			if sd.spooled == nil || sd.Markdown != "" {
				t.Fatal("the Markdown was not streamed")
			}
			if direct := sd.spooled.out != nil; direct == tc.backticks {
				t.Errorf("streamed straight into the Markdown file: %v, want %v", direct, !tc.backticks)
			}
			var streamed []byte
			if sd.spooled.out != nil {
				if err := sd.spooled.out.Commit(); err != nil {
					t.Fatal(err)
				}
				streamed, err = os.ReadFile(mdPath)
			} else {
				var r io.Reader
				if r, err = sd.markdownReader(); err == nil {
					streamed, err = io.ReadAll(r)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(streamed) != d.Markdown || sd.chars() != utf8.RuneCountInString(d.Markdown) {
				t.Errorf("streamed %d bytes (%d characters), Convert %d", len(streamed), sd.chars(), len(d.Markdown))
			}
			sd.release()
			res, err := handleXMLFile(t, writeXMLFile(t, tc.name+".xml", data))
			if err != nil || res.Status != StatusReady || res.Kind != KindXML {
				t.Fatalf("%+v %v", res, err)
			}
			md, err := os.ReadFile(res.OutputPath)
			if err != nil {
				t.Fatal(err)
			}
			if string(md) != d.Markdown {
				t.Errorf("the handler wrote %d bytes, Convert %d; the file starts\n%.600s", len(md), len(d.Markdown), md)
			}
			if want := utf8.RuneCountInString(d.Markdown); res.TextLength != want {
				t.Errorf("text length %d, want %d", res.TextLength, want)
			}
			if left, _ := os.ReadDir(tmp); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

// TestMarkdownStats: the characters and the longest run of backticks of a stream written in
// pieces are those of the whole, whatever the pieces (characters and runs cut between writes,
// invalid UTF-8 included).
func TestMarkdownStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := [][]byte{[]byte("`"), []byte("a"), []byte("値"), []byte("😀"), []byte("é"), {0xE3, 0x81}, {0x80}, {0xFF}, []byte("\n")}
	for range 500 {
		var whole []byte
		for range rng.IntN(60) {
			whole = append(whole, alphabet[rng.IntN(len(alphabet))]...)
		}
		var out bytes.Buffer
		st := &mdStats{w: &out}
		for rest := whole; len(rest) > 0; {
			n := 1 + rng.IntN(min(len(rest), 7))
			st.Write(rest[:n])
			rest = rest[n:]
		}
		longest, run := 0, 0
		for _, c := range whole {
			if c == '`' {
				run++
				longest = max(longest, run)
			} else {
				run = 0
			}
		}
		if got, want := st.chars.end(), utf8.RuneCount(whole); got != want || st.longest != longest || !bytes.Equal(out.Bytes(), whole) {
			t.Fatalf("%q: %d characters, longest run %d; want %d, %d", whole, got, st.longest, want, longest)
		}
	}
}

// TestXMLDeepHandleMemory: the handler converts a 49.9 MB XML file nested ten deep, whose
// Markdown is over three times its size, with the heap under 150 MB, the input included (the
// Markdown is streamed to its file); holding the Markdown it peaked at about 270 MB.
func TestXMLDeepHandleMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 50 MB XML file")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "deep.xml")
	bigDeepXML(t, path, int(MaxFileSize)-100_000)
	var res Result
	var err error
	mb := peakHeap(func() { res, err = handleXMLFile(t, path) })
	if err != nil || res.Status != StatusReady || res.TextLength < 3*int(MaxFileSize) {
		t.Fatalf("%+v %v", res, err)
	}
	t.Logf("peak heap %.0f MB for %d characters of Markdown", mb, res.TextLength)
	if mb > 150 {
		t.Fatalf("peak heap %.0f MB, want < 150 MB", mb)
	}
}

// TestXMLWithoutTemporaryFolder: where no temporary file can be made (the folder is missing),
// the handler converts an XML document with backticks in memory as before, and one without
// straight into its file, with the same Markdown, rather than failing.
func TestXMLWithoutTemporaryFolder(t *testing.T) {
	for _, backticks := range []bool{false, true} {
		xmlWithoutTemporaryFolder(t, nestedXML(50, backticks))
	}
}

func xmlWithoutTemporaryFolder(t *testing.T, data []byte) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(dir, "missing"))
	d, err := Convert(context.Background(), data, "n.xml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := handleXMLFile(t, writeXMLFile(t, "n.xml", data))
	if err != nil || res.Status != StatusReady {
		t.Fatalf("%+v %v", res, err)
	}
	if md, err := os.ReadFile(res.OutputPath); err != nil || string(md) != d.Markdown {
		t.Fatalf("the handler wrote %d bytes (%v), Convert %d", len(md), err, len(d.Markdown))
	}
}

// TestBacktickFree: XML whose text may hold a backtick — the byte itself, a character
// reference to it, or UTF-16 — is not read as free of them.
func TestBacktickFree(t *testing.T) {
	for in, want := range map[string]bool{
		`<a k="v">text &#97; &#x3C; &amp;</a>`: true,
		"<a>`</a>":                             false,
		`<a>&#96;</a>`:                         false,
		`<a>&#x60;</a>`:                        false,
		`<a>&#X0060;</a>`:                      false,
		"<\x00a\x00>\x00":                      false,
		`<a>&#`:                                true,
	} {
		if got := backtickFree([]byte(in)); got != want {
			t.Errorf("backtickFree(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestXMLDamagedLeavesNoFile: XML that breaks off after its Markdown began to stream fails
// E004 and leaves nothing in the documents folder, not even a partial file.
func TestXMLDamagedLeavesNoFile(t *testing.T) {
	data := nestedXML(200, false)
	path := writeXMLFile(t, "broken.xml", data[:len(data)/2])
	_, err := handleXMLFile(t, path)
	if je := job.AsError(err); je == nil || je.Code != job.E004 {
		t.Fatalf("err %v, want E004", err)
	}
	if left, _ := os.ReadDir(filepath.Join(filepath.Dir(path), "data", "documents")); len(left) > 0 {
		t.Errorf("files left: %v", left)
	}
}

// TestXMLIndentDeeperThanOnePiece: elements nested deeper than the indentation written in one
// piece are indented two spaces a level all the same.
func TestXMLIndentDeeperThanOnePiece(t *testing.T) {
	const depth = 45
	var in, want strings.Builder
	for i := range depth {
		in.WriteString("<e>")
		if i < depth-1 {
			want.WriteString(strings.Repeat("  ", i) + "<e>\n")
		}
	}
	in.WriteString("x")
	want.WriteString(strings.Repeat("  ", depth-1) + "<e>x</e>")
	for i := depth - 2; i >= 0; i-- {
		in.WriteString("</e>")
		want.WriteString("\n" + strings.Repeat("  ", i) + "</e>")
	}
	in.WriteString("</e>")
	d := convertOK(t, []byte(in.String()), "deep.xml")
	if d.Markdown != "```xml\n"+want.String()+"\n```\n" {
		t.Fatalf("got\n%s", d.Markdown)
	}
}
