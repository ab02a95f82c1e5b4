package docjob

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding/japanese"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
)

func readCorpus(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("corpus file missing (run testdata/gen.sh): %v", err)
	}
	return b
}

func codeOf(err error) job.Code {
	var je *job.Error
	if errors.As(err, &je) {
		return je.Code
	}
	return ""
}

// TestCorpus converts every committed corpus file and checks kind, outcome and key phrases.
func TestCorpus(t *testing.T) {
	tests := []struct {
		file    string
		kind    Kind
		status  Status
		code    job.Code
		want    []string
		notWant []string
	}{
		{"report.pdf", KindPDF, StatusReady, "", []string{"<!-- Page 1 -->", "<!-- Page 3 -->", "補助金申請の手引き", "Mixed English text: JobDesk converts documents offline.",
			"区分 上限額 補助率", "小規模事業者 50万円 2/3", "第2ページ：審査の観点", "脚注：令和6年度の公募要領に基づく。", "テキストボックスの注意書き"}, nil},
		{"twocol.pdf", KindPDF, StatusReady, "", []string{"左段の本文その12。", "右段の始まり。"}, nil},
		{"vertical.pdf", KindPDF, StatusReady, "", []string{"縦書きの文章です。", "一行目の次に二行目が続きます。", "令和六年四月一日"}, nil},
		{"kangxi.pdf", KindPDF, StatusReady, "", []string{"部首の文字：一人日本"}, []string{"\u2f00", "\u2f08", "\u2f47"}},
		{"scan.pdf", KindPDF, StatusPartial, "", []string{"<!-- Page 1 -->", "no text layer"}, nil},
		{"pw_owner_aes256.pdf", KindPDF, StatusReady, "", []string{"補助金申請の手引き", "第3ページ：よくある質問と回答。"}, nil},
		{"pw_owner_rc4.pdf", KindPDF, StatusReady, "", []string{"補助金申請の手引き"}, nil},
		{"pw_user_aes256.pdf", KindPDF, "", job.E005, nil, nil},
		{"pw_user_aes128.pdf", KindPDF, "", job.E005, nil, nil},
		{"pw_user_rc4.pdf", KindPDF, "", job.E005, nil, nil},
		{"truncated.pdf", KindPDF, "", job.E004, nil, nil},
		{"badxref.pdf", KindPDF, StatusReady, "", []string{"補助金申請の手引き", "第2ページ：審査の観点", "第3ページ"}, nil},
		{"garbage.pdf", KindUnknown, "", job.E004, []string{"damaged", "PDF"}, nil},
		{"report.docx", KindDOCX, StatusReady, "", []string{"# 補助金申請の手引き", "## 申請に必要な書類", "- 事業計画書", "1. 申請書を作成する", "2. 電子申請で提出する",
			"| 小規模事業者 | 特例枠は200万円 | 特例枠は200万円 |", "追加された新しい文言を確認してください。", "本書は申請の手順", "]: 脚注：令和6年度の公募要領に基づく。",
			"> Header: 社外秘 ヘッダー", "> Footer: 株式会社サンプル フッター", "テキストボックスの注意書き"}, []string{"削除された古い文言", "しんせい"}},
		{"truncated.docx", KindDOCX, "", job.E004, nil, nil},
		{"book.xlsx", KindXLSX, StatusReady, "", []string{"## 売上", "| 2024/04/01 | 令和6年4月1日 | ノートPC | ￥150,000 | 10.0% | ￥165,000 |",
			"| 合計（結合セル） | 合計（結合セル） | 合計（結合セル） | ￥248,000 |", "## 非表示メモ (hidden)", "隠しシートの内容"}, nil},
		{"truncated.xlsx", KindXLSX, "", job.E004, nil, nil},
		{"sjis.csv", KindCSV, StatusReady, "", []string{"| 氏名 | 部署 | 内線 |", "| --- | --- | --- |", "| 山田太郎 | 総務部 | 1001 |"}, nil},
		{"bom.csv", KindCSV, StatusReady, "", []string{"| 佐藤花子 | 経理部 | 1002 |"}, []string{"\ufeff"}},
		{"eucjp.txt", KindText, StatusReady, "", []string{"来週の会議は第二会議室で行います。"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			data := readCorpus(t, tc.file)
			if k := Detect(data, tc.file); k != tc.kind {
				t.Fatalf("Detect = %s, want %s", k, tc.kind)
			}
			d, err := Convert(context.Background(), data, tc.file, Options{NoOCR: true})
			if tc.code != "" {
				if codeOf(err) != tc.code {
					t.Fatalf("err = %v, want code %s", err, tc.code)
				}
				var je *job.Error
				errors.As(err, &je)
				if je.MessageJa == "" || je.Message == "" {
					t.Fatalf("error lacks a sentence: %+v", je)
				}
				if tc.code == job.E005 && (!strings.Contains(je.Message, "password-protected") || strings.Contains(je.Message, "damaged")) {
					t.Fatalf("password error says %q", je.Message)
				}
				if tc.code == job.E004 && tc.kind != KindUnknown && !strings.Contains(je.Message, "damaged") {
					t.Fatalf("damaged error says %q", je.Message)
				}
				for _, w := range tc.want { // for failures: words the message must contain
					if !strings.Contains(je.Message, w) {
						t.Fatalf("error %q does not say %q", je.Message, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			st, why := d.Status()
			if st != tc.status {
				t.Fatalf("status %s (%s), want %s\n%s", st, why, tc.status, d.Markdown)
			}
			for _, w := range tc.want {
				if !strings.Contains(d.Markdown, w) {
					t.Errorf("missing %q in\n%s", w, d.Markdown)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(d.Markdown, w) {
					t.Errorf("unexpected %q in\n%s", w, d.Markdown)
				}
			}
			for _, r := range d.Markdown {
				if r < 0x20 && r != '\n' && r != '\t' {
					t.Fatalf("control character %U in output", r)
				}
			}
		})
	}
}

func TestScannedPDFReportsPagesAndOCR(t *testing.T) {
	d, err := Convert(context.Background(), readCorpus(t, "scan.pdf"), "scan.pdf", Options{NoOCR: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.NoTextPages) != 1 || d.NoTextPages[0] != 1 || d.Method != MethodPartial {
		t.Fatalf("no-text pages %v method %s", d.NoTextPages, d.Method)
	}
	if _, why := d.Status(); why != "scanned — no text layer" {
		t.Fatalf("reason %q", why)
	}
	ok, reason := OCRAvailable()
	d2, err := Convert(context.Background(), readCorpus(t, "scan.pdf"), "scan.pdf", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		if len(d2.Notes) == 0 || !strings.Contains(d2.Notes[0], "OCR is not available") {
			t.Fatalf("notes %v (OCR missing: %s)", d2.Notes, reason)
		}
		t.Logf("OCR not installed (%s): reported as not available", reason)
		return
	}
	if len(d2.OCRPages) != 1 || !strings.Contains(d2.Markdown, "補助金") {
		t.Fatalf("OCR pages %v\n%s", d2.OCRPages, d2.Markdown)
	}
}

func TestDOCXFuriganaOption(t *testing.T) {
	d, err := Convert(context.Background(), readCorpus(t, "report.docx"), "report.docx", Options{Furigana: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Markdown, "申請(しんせい)の手順") {
		t.Fatalf("no reading:\n%s", d.Markdown)
	}
}

// TestEncryptedOffice encrypts the corpus DOCX and XLSX the way Office does (an OLE container)
// and expects E005, never "damaged".
func TestEncryptedOffice(t *testing.T) {
	for _, name := range []string{"report.docx", "book.xlsx"} {
		t.Run(name, func(t *testing.T) {
			enc, err := excelize.Encrypt(readCorpus(t, name), &excelize.Options{Password: "secret"})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{name, "noext"} {
				_, err := Convert(context.Background(), enc, n, Options{})
				if codeOf(err) != job.E005 || strings.Contains(err.Error(), "damaged") {
					t.Fatalf("%s: err = %v", n, err)
				}
			}
		})
	}
}

func TestDecodeText(t *testing.T) {
	const s = "氏名,部署\n山田太郎,総務部\n"
	sj, _ := japanese.ShiftJIS.NewEncoder().Bytes([]byte(s))
	eu, _ := japanese.EUCJP.NewEncoder().Bytes([]byte(s))
	u16 := []byte{0xFF, 0xFE}
	for _, r := range s {
		u16 = append(u16, byte(r), byte(r>>8))
	}
	tests := []struct {
		name string
		in   []byte
		enc  string
	}{
		{"utf8", []byte(s), EncUTF8},
		{"bom", append([]byte{0xEF, 0xBB, 0xBF}, s...), EncUTF8BOM},
		{"cp932", sj, EncCP932},
		{"eucjp", eu, EncEUCJP},
		{"utf16le", u16, EncUTF16LE},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, enc, ok := DecodeText(tc.in)
			if got != s || enc != tc.enc || !ok {
				t.Fatalf("got %q %s %v", got, enc, ok)
			}
		})
	}
}

func TestClean(t *testing.T) {
	tests := []struct{ in, want string }{
		{"\u2f00\u2f08\u2f47", "一人日"},
		{"a\x00b\x07c\r\nd", "abc\nd"},
		{"ＡＢＣ㈱", "ＡＢＣ㈱"}, // full-width letters stay as written
		{"\u00adx\u200by", "xy"},
	}
	for _, tc := range tests {
		if got := Clean(tc.in); got != tc.want {
			t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDetectByContentNotExtension(t *testing.T) {
	tests := []struct {
		file, as string
		want     Kind
	}{
		{"report.pdf", "renamed.docx", KindPDF},
		{"report.docx", "renamed.pdf", KindDOCX},
		{"book.xlsx", "renamed.zip", KindXLSX},
		{"sjis.csv", "noext", KindCSV},
		{"eucjp.txt", "memo.dat", KindText},
	}
	for _, tc := range tests {
		if k := Detect(readCorpus(t, tc.file), tc.as); k != tc.want {
			t.Errorf("%s as %s: %s, want %s", tc.file, tc.as, k, tc.want)
		}
	}
	if _, err := Convert(context.Background(), []byte("\x89PNG\r\n\x1a\nxxxx"), "a.png", Options{}); codeOf(err) != job.E004 || !strings.Contains(err.Error(), "image") {
		t.Fatalf("image: %v", err)
	}
}

func TestDeadline(t *testing.T) {
	data := readCorpus(t, "report.pdf")
	_, err := Convert(context.Background(), data, "report.pdf", Options{Timeout: time.Nanosecond})
	if codeOf(err) != job.E011 {
		t.Fatalf("err = %v, want E011", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Convert(ctx, data, "report.pdf", Options{}); codeOf(err) != job.E013 {
		t.Fatalf("cancelled: %v", err)
	}
}

// zipEntry describes one entry of a test archive.
type zipEntry struct {
	name    string // raw name bytes
	data    []byte
	flags   uint16
	symlink bool
	// declared, when > 0, is written as the uncompressed size instead of len(data) (a bomb).
	declared uint64
}

func makeZip(t testing.TB, entries []zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Store, Flags: e.flags}
		h.NonUTF8 = e.flags&0x800 == 0
		if e.symlink {
			h.SetMode(os.ModeSymlink | 0o777)
		}
		if e.declared > 0 {
			h.CRC32 = 0
			h.CompressedSize64 = uint64(len(e.data))
			h.UncompressedSize64 = e.declared
			w, err := zw.CreateRaw(h)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(e.data)
			continue
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(e.data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestZip(t *testing.T) {
	sjisName, _ := japanese.ShiftJIS.NewEncoder().String("資料/表.csv") // 表 = 0x95 0x5C
	csv := readCorpus(t, "sjis.csv")
	inner := makeZip(t, []zipEntry{{name: "inner.txt", data: []byte("入れ子の中身です。")}})
	deep := inner
	for i := 0; i < MaxZipDepth; i++ {
		deep = makeZip(t, []zipEntry{{name: fmt.Sprintf("level%d.zip", i), data: deep}})
	}
	many := make([]zipEntry, MaxZipEntries+1)
	for i := range many {
		many[i] = zipEntry{name: fmt.Sprintf("f%02d.txt", i), data: []byte("x")}
	}
	tests := []struct {
		name     string
		entries  []zipEntry
		code     job.Code // whole archive fails
		status   Status
		want     []string // in Markdown
		failed   []string // children listed as failed
		children int
	}{
		{name: "cp932 names, skipped files", entries: []zipEntry{
			{name: sjisName, data: csv},
			{name: "__MACOSX/._表.csv", data: []byte("junk")},
			{name: ".DS_Store", data: []byte("junk")},
			{name: "メモ.txt", data: []byte("メモの本文"), flags: 0x800},
		}, status: StatusReady, want: []string{"# 資料/表.csv", "| 山田太郎 | 総務部 | 1001 |", "# メモ.txt", "メモの本文"}, children: 2},
		{name: "zip-slip rejected", entries: []zipEntry{
			{name: "../evil.txt", data: []byte("evil")},
			{name: "/etc/evil.txt", data: []byte("evil")},
			{name: "C:/evil.txt", data: []byte("evil")},
			{name: "a\\..\\evil.txt", data: []byte("evil")},
			{name: "link", data: []byte("/etc/passwd"), symlink: true},
			{name: "ok.txt", data: []byte("安全な本文")},
		}, status: StatusPartial, want: []string{"安全な本文"}, failed: []string{"../evil.txt", "/etc/evil.txt", "C:/evil.txt", "a\\..\\evil.txt", "link"}, children: 6},
		{name: "only unsafe", entries: []zipEntry{{name: "../evil.txt", data: []byte("evil")}}, code: job.E004},
		{name: "bomb: more than declared", entries: []zipEntry{
			{name: "bomb.txt", data: bytes.Repeat([]byte("A"), 4096), declared: 10},
			{name: "ok.txt", data: []byte("本文")},
		}, status: StatusPartial, failed: []string{"bomb.txt"}, children: 2},
		{name: "declared total too large", entries: []zipEntry{
			{name: "a.txt", data: []byte("x"), declared: 40 << 20},
			{name: "b.txt", data: []byte("x"), declared: 40 << 20},
			{name: "c.txt", data: []byte("x"), declared: 40 << 20},
		}, code: job.E003},
		{name: "single entry over 50 MB", entries: []zipEntry{
			{name: "big.txt", data: []byte("x"), declared: 60 << 20},
			{name: "ok.txt", data: []byte("本文")},
		}, status: StatusPartial, failed: []string{"big.txt"}, children: 2},
		{name: "only entry over 50 MB", entries: []zipEntry{{name: "big.txt", data: []byte("x"), declared: 60 << 20}}, code: job.E003},
		{name: "too many entries", entries: many, code: job.E003},
		{name: "encrypted entries", entries: []zipEntry{{name: "secret.txt", data: []byte("xx"), flags: 1}}, code: job.E005},
		{name: "nested", entries: []zipEntry{{name: "inner.zip", data: inner}}, status: StatusReady, want: []string{"# inner.zip", "# inner.txt", "入れ子の中身です。"}, children: 2},
		{name: "nested too deep", entries: []zipEntry{{name: "deep.zip", data: deep}, {name: "ok.txt", data: []byte("本文")}},
			status: StatusPartial, failed: []string{"deep.zip"}, children: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := makeZip(t, tc.entries)
			d, err := Convert(context.Background(), data, "archive.zip", Options{})
			if tc.code != "" {
				if codeOf(err) != tc.code {
					t.Fatalf("err = %v, want %s", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			st, why := d.Status()
			if st != tc.status {
				t.Fatalf("status %s (%s), want %s; children %+v", st, why, tc.status, d.Children)
			}
			if len(d.Children) != tc.children {
				t.Fatalf("children %+v, want %d", d.Children, tc.children)
			}
			for _, w := range tc.want {
				if !strings.Contains(d.Markdown, w) {
					t.Errorf("missing %q in\n%s", w, d.Markdown)
				}
			}
			for _, f := range tc.failed {
				found := false
				for _, c := range d.Children {
					if c.Name == f && c.Status == StatusFailed && c.Code != "" {
						found = true
					}
				}
				if !found || !strings.Contains(why, f) {
					t.Errorf("%s not listed as failed: %+v (%s)", f, d.Children, why)
				}
			}
		})
	}
}

func TestExtractZip(t *testing.T) {
	sjisName, _ := japanese.ShiftJIS.NewEncoder().String("表.txt")
	data := makeZip(t, []zipEntry{
		{name: sjisName, data: []byte("ひょう")},
		{name: "dir/a.txt", data: []byte("a")},
		{name: "../evil.txt", data: []byte("evil")},
	})
	dir := t.TempDir()
	l, err := ExtractZip(context.Background(), data, blob.Local{}, filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != 2 || len(l.Rejected) != 1 {
		t.Fatalf("%+v", l)
	}
	b, err := os.ReadFile(filepath.Join(dir, "out", "表.txt"))
	if err != nil || string(b) != "ひょう" {
		t.Fatalf("表.txt: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "evil.txt")); err == nil {
		t.Fatal("zip-slip wrote outside the folder")
	}
}

// newConverter returns a converter on this machine's files that caches in a BlobCache under a
// temporary folder, and that cache.
func newConverter(t *testing.T) (*Converter, BlobCache) {
	t.Helper()
	cache := BlobCache{Store: blob.Local{}, Prefix: filepath.Join(t.TempDir(), "cache")}
	return NewConverter(cache, blob.Local{}), cache
}

// cachedResults returns every result stored in cache.
func cachedResults(t *testing.T, cache BlobCache) []Result {
	t.Helper()
	objs, err := cache.Store.List(context.Background(), cache.Prefix+"/")
	if err != nil {
		t.Fatal(err)
	}
	var out []Result
	for _, o := range objs {
		b, err := blob.ReadAll(context.Background(), cache.Store, o.URI)
		if err != nil {
			t.Fatal(err)
		}
		var res Result
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatalf("%s: %v", o.URI, err)
		}
		out = append(out, res)
	}
	return out
}

// countCached counts the results in cache for which keep is true.
func countCached(t *testing.T, cache BlobCache, keep func(Result) bool) int {
	t.Helper()
	n := 0
	for _, r := range cachedResults(t, cache) {
		if keep(r) {
			n++
		}
	}
	return n
}

func failed(r Result) bool { return r.Status == StatusFailed }

func run(t *testing.T, c *Converter, dataDir string, in Input) (Result, error) {
	t.Helper()
	raw, _ := json.Marshal(in)
	ctx := job.WithInfo(context.Background(), job.Info{ID: 7, Output: dataDir})
	out, err := c.Handle(ctx, raw, job.Discard)
	var p *job.PartialResult
	if errors.As(err, &p) {
		out = p.Result
	}
	var res Result
	if out != nil {
		if jerr := json.Unmarshal(out, &res); jerr != nil {
			t.Fatal(jerr)
		}
	}
	return res, err
}

func copyCorpus(t *testing.T, dir, name string) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, readCorpus(t, name), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHandlerCacheExport(t *testing.T) {
	c, cache := newConverter(t)
	dataDir, in := t.TempDir(), t.TempDir()
	pdfPath := copyCorpus(t, in, "report.pdf")

	res, err := run(t, c, dataDir, Input{Path: pdfPath})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusReady || res.Cached || res.PageCount != 3 || res.Method != MethodNative || res.TextLength == 0 ||
		res.Version != Version || len(res.SHA256) != 64 {
		t.Fatalf("first run %+v", res)
	}
	if filepath.Dir(res.OutputPath) != filepath.Join(dataDir, "documents") || !strings.HasPrefix(filepath.Base(res.OutputPath), "report_") {
		t.Fatalf("output path %s", res.OutputPath)
	}
	again, err := run(t, c, dataDir, Input{Path: pdfPath})
	if err != nil || !again.Cached || again.OutputPath != res.OutputPath {
		t.Fatalf("second run %+v %v", again, err)
	}
	forced, err := run(t, c, dataDir, Input{Path: pdfPath, Force: true})
	if err != nil || forced.Cached {
		t.Fatalf("forced %+v %v", forced, err)
	}
	if rows := countCached(t, cache, func(r Result) bool { return r.SHA256 == res.SHA256 }); rows != 1 {
		t.Fatalf("cache rows %d", rows)
	}
	raw, _ := json.Marshal(res)
	var buf bytes.Buffer
	if err := c.ExportMarkdown(context.Background(), raw, &buf); err != nil || !strings.Contains(buf.String(), "補助金申請の手引き") {
		t.Fatalf("export %v %q", err, buf.String())
	}
	if err := c.ExportMarkdown(context.Background(), nil, &buf); codeOf(err) != job.E014 {
		t.Fatalf("export of nothing: %v", err)
	}

	// partial: scanned PDF ends PARTIAL with the reason
	scan := copyCorpus(t, in, "scan.pdf")
	sres, err := run(t, c, dataDir, Input{Path: scan, NoOCR: true})
	var p *job.PartialResult
	if !errors.As(err, &p) || sres.Status != StatusPartial || !strings.Contains(sres.Reason, "scanned — no text layer") || sres.Method != MethodPartial {
		t.Fatalf("scan %+v %v", sres, err)
	}

	// failed: password, stored and reused, still E005
	pw := copyCorpus(t, in, "pw_user_aes256.pdf")
	for i := 0; i < 2; i++ {
		if _, err := run(t, c, dataDir, Input{Path: pw}); codeOf(err) != job.E005 {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	if rows := countCached(t, cache, failed); rows != 1 {
		t.Fatalf("failed rows %d", rows)
	}
	if _, err := run(t, c, dataDir, Input{Path: filepath.Join(in, "missing.pdf")}); codeOf(err) != job.E014 {
		t.Fatalf("missing file: %v", err)
	}
}

// TestWorkflowModes runs the ZIP path the way the workflow does: ingest, extract, one conversion
// per entry (the Map), collect.
func TestWorkflowModes(t *testing.T) {
	c, _ := newConverter(t)
	dataDir, in := t.TempDir(), t.TempDir()
	zp := filepath.Join(in, "bundle.zip")
	os.WriteFile(zp, makeZip(t, []zipEntry{
		{name: "a.csv", data: readCorpus(t, "sjis.csv")},
		{name: "b.pdf", data: readCorpus(t, "pw_user_rc4.pdf")},
		{name: "../evil.txt", data: []byte("x")},
	}), 0o600)
	ing, err := run(t, c, dataDir, Input{Path: zp, Mode: ModeIngest})
	if err != nil || ing.Kind != KindZIP || ing.Cached {
		t.Fatalf("ingest %+v %v", ing, err)
	}
	ex, err := run(t, c, dataDir, Input{Path: zp, Mode: ModeExtract})
	if err != nil || len(ex.Entries) != 2 || len(ex.Children) != 1 {
		t.Fatalf("extract %+v %v", ex, err)
	}
	var children []json.RawMessage
	for _, e := range ex.Entries {
		res, err := run(t, c, dataDir, Input{Path: e.Path, Name: e.Name, Depth: 1})
		if err != nil {
			je := job.AsError(err)
			cause, _ := json.Marshal(je)
			b, _ := json.Marshal(map[string]string{"Error": je.ErrorName(), "Cause": string(cause), "name": e.Name})
			children = append(children, b)
			continue
		}
		b, _ := json.Marshal(res)
		children = append(children, b)
	}
	col, err := run(t, c, dataDir, Input{Path: zp, Mode: ModeCollect, Children: children, Rejected: ex.Children})
	var p *job.PartialResult
	if !errors.As(err, &p) || col.Status != StatusPartial || len(col.Children) != 3 {
		t.Fatalf("collect %+v %v", col, err)
	}
	md, _ := os.ReadFile(col.OutputPath)
	if !strings.Contains(string(md), "| 山田太郎 | 総務部 | 1001 |") || !strings.Contains(col.Reason, "b.pdf") || !strings.Contains(col.Reason, "../evil.txt") {
		t.Fatalf("collected %q reason %q", md, col.Reason)
	}
}

// TestCaughtChild reads a Map iteration's caught failure in the local and the Lambda shape.
func TestCaughtChild(t *testing.T) {
	local, _ := json.Marshal(errPassword(KindPDF))
	tests := []struct {
		name, errName, cause, code, reason string
	}{
		{"a.pdf", "BusinessError", string(local), "E005", "password-protected"},
		{"b.pdf", "BusinessError", `{"errorMessage":"E004: the PDF file is damaged and cannot be read","errorType":"BusinessError"}`, "E004", "damaged"},
		{"c.pdf", "States.Timeout", "E011: converting took too long", "E011", "too long"},
		{"d.pdf", "Lambda.Unknown", "out of memory", "E015", "Lambda.Unknown out of memory"},
		{"e.pdf", ErrNamePassword, "the PDF file is password-protected", "E005", "password-protected"},
		{"f.zip", ErrNameTooLarge, "the ZIP archive has 51 entries (limit 50)", "E003", "51 entries"},
	}
	for _, tc := range tests {
		c := caughtChild(tc.name, tc.errName, tc.cause)
		if c.Name != tc.name || c.Status != StatusFailed || c.Code != tc.code || !strings.Contains(c.Reason, tc.reason) {
			t.Errorf("%s: %+v", tc.name, c)
		}
	}
}

// TestMayHaveMerges: merged ranges are looked up only in workbooks that have them, and a workbook
// without them still converts every cell.
func TestMayHaveMerges(t *testing.T) {
	for _, merged := range []bool{false, true} {
		f := excelize.NewFile()
		f.SetCellValue("Sheet1", "A1", "見出し")
		f.SetCellValue("Sheet1", "B1", "値")
		f.SetCellValue("Sheet1", "A2", "結合")
		if merged {
			f.MergeCell("Sheet1", "A2", "B2")
		}
		var buf bytes.Buffer
		if err := f.Write(&buf); err != nil {
			t.Fatal(err)
		}
		x, err := excelize.OpenReader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if got := mayHaveMerges(x, 1); got != merged {
			t.Fatalf("merged=%v: mayHaveMerges %v", merged, got)
		}
		d, err := Convert(context.Background(), buf.Bytes(), "m.xlsx", Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := "| 結合 |  |"
		if merged {
			want = "| 結合 | 結合 |"
		}
		if !strings.Contains(d.Markdown, "| 見出し | 値 |") || !strings.Contains(d.Markdown, want) {
			t.Fatalf("merged=%v:\n%s", merged, d.Markdown)
		}
	}
}

// TestXLSXBuiltinDates: the built-in short date (14) and date-time (22) formats read as Japanese
// Excel shows them.
func TestXLSXBuiltinDates(t *testing.T) {
	f := excelize.NewFile()
	d14, _ := f.NewStyle(&excelize.Style{NumFmt: 14})
	d22, _ := f.NewStyle(&excelize.Style{NumFmt: 22})
	f.SetCellValue("Sheet1", "A1", time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC))
	f.SetCellStyle("Sheet1", "A1", "A1", d14)
	f.SetCellValue("Sheet1", "B1", time.Date(2024, 12, 25, 9, 30, 0, 0, time.UTC))
	f.SetCellStyle("Sheet1", "B1", "B1", d22)
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	d, err := Convert(context.Background(), buf.Bytes(), "dates.xlsx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Markdown, "| 2024/4/1 | 2024/12/25 9:30 |") && !strings.Contains(d.Markdown, "| 2024/4/1 | 2024/12/25 09:30 |") {
		t.Fatalf("dates:\n%s", d.Markdown)
	}
}

// TestTextEncodings: UTF-8 with a few bad bytes converts with U+FFFD and ends partial saying how
// many bytes could not be read; text no supported encoding reads cleanly fails E006 instead of
// coming out as mojibake; CP932 text is still read as CP932.
func TestTextEncodings(t *testing.T) {
	body := "会議の議事録です。\n次回は来週の月曜日に行います。\n"
	cut := []byte(body + "最後")
	cut = cut[:len(cut)-1] // the last character loses a byte: 2 bytes left over
	csvCut := []byte("氏名,部署\n山田太郎,総務部\n佐藤花子,経理")
	csvCut = append(csvCut[:len(csvCut)-1], '\n')
	for _, tc := range []struct {
		name string
		data []byte
		kind Kind
		bad  int
		want string
	}{
		{"cut.txt", cut, KindText, 2, "次回は来週の月曜日に行います。"},
		{"cut.csv", csvCut, KindCSV, 2, "| 山田太郎 | 総務部 |"},
	} {
		d, err := Convert(context.Background(), tc.data, tc.name, Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		st, why := d.Status()
		wantWhy := fmt.Sprintf("%d bytes could not be read as UTF-8", tc.bad)
		if d.Kind != tc.kind || d.Encoding != EncUTF8 || d.BadBytes != tc.bad || st != StatusPartial || !strings.Contains(why, wantWhy) ||
			!strings.Contains(d.ReasonJa(), fmt.Sprintf("%d バイト", tc.bad)) {
			t.Fatalf("%s: kind %s enc %s bad %d status %s %q / %q", tc.name, d.Kind, d.Encoding, d.BadBytes, st, why, d.ReasonJa())
		}
		if !strings.Contains(d.Markdown, tc.want) || !strings.Contains(d.Markdown, "\uFFFD") {
			t.Fatalf("%s:\n%s", tc.name, d.Markdown)
		}
	}

	// Not UTF-8, CP932 nor EUC-JP: 0x81 0x20 is a CP932 lead byte without its trail byte.
	bad := []byte("name,value\nabc,\x81 \x82 \xff\xfe\nxyz,\x80\x80\n")
	for _, name := range []string{"bad.txt", "bad.csv"} {
		_, err := Convert(context.Background(), bad, name, Options{})
		var je *job.Error
		if !errors.As(err, &je) || je.Code != job.E006 || !strings.Contains(je.Message, "not valid UTF-8") ||
			!strings.Contains(je.MessageJa, "文字コード") || je.Name != ErrNameEncoding {
			t.Fatalf("%s: %v", name, err)
		}
	}

	// CP932 with a little Japanese in ASCII stays CP932 (its few bytes are not "mostly UTF-8").
	sj, _ := japanese.ShiftJIS.NewEncoder().Bytes([]byte("id,name\n1,東京\n2,Osaka\n"))
	d, err := Convert(context.Background(), sj, "cities.csv", Options{})
	if err != nil || d.Encoding != EncCP932 || d.BadBytes != 0 || !strings.Contains(d.Markdown, "| 1 | 東京 |") {
		t.Fatalf("cp932: %v %+v", err, d)
	}

	// Through the converter job: the partial reason in both languages; the failure is E006 and
	// is remembered like other permanent failures.
	c, cache := newConverter(t)
	dataDir, in := t.TempDir(), t.TempDir()
	p := filepath.Join(in, "cut.txt")
	os.WriteFile(p, cut, 0o600)
	res, err := run(t, c, dataDir, Input{Path: p})
	var pr *job.PartialResult
	if !errors.As(err, &pr) || res.Status != StatusPartial || !strings.Contains(res.Reason, "2 bytes could not be read") ||
		!strings.Contains(res.ReasonJa, "2 バイト") {
		t.Fatalf("partial: %v %+v", err, res)
	}
	bp := filepath.Join(in, "bad.txt")
	os.WriteFile(bp, bad, 0o600)
	for i := 0; i < 2; i++ {
		if _, err := run(t, c, dataDir, Input{Path: bp}); codeOf(err) != job.E006 {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	if rows := countCached(t, cache, failed); rows != 1 {
		t.Fatalf("failed rows %d", rows)
	}
}

// TestJapaneseMessages: the Japanese sentences name kinds in Japanese, never "encrypted Office"
// or "unknown binary", and carry no English words in parentheses.
func TestJapaneseMessages(t *testing.T) {
	errs := []*job.Error{errPassword(KindOffice), errUnsupported(KindUnknown), errUnsupported(KindImage),
		errDamaged(KindText, errors.New("x")), errTimeout(KindText), errTooLarge("the file", "ファイル", 60<<20, MaxFileSize),
		errEncoding(KindCSV)}
	_, err := Convert(context.Background(), readCorpus(t, "garbage.pdf"), "garbage.bin", Options{})
	errs = append(errs, job.AsError(err))
	for _, e := range errs {
		for _, en := range []string{"encrypted", "unknown", "binary", "image", "text", "password", "damaged", "file", "part "} {
			if strings.Contains(strings.ToLower(e.MessageJa), en) {
				t.Errorf("%s: Japanese message %q contains %q", e.Message, e.MessageJa, en)
			}
		}
	}
	if !strings.Contains(errPassword(KindOffice).MessageJa, "暗号化されたOffice") || !strings.Contains(errUnsupported(KindUnknown).MessageJa, "不明なバイナリ") {
		t.Fatalf("labels: %q %q", errPassword(KindOffice).MessageJa, errUnsupported(KindUnknown).MessageJa)
	}
}

// TestGarbageNamedAsKind: bytes of no known type named .pdf/.docx/.xlsx fail E004 "damaged"
// naming the type the name claims, in both languages; unnamed they stay "unsupported".
func TestGarbageNamedAsKind(t *testing.T) {
	garbage := []byte("this is not a document at all \x01\x02 just bytes")
	garbage = append(garbage, bytes.Repeat([]byte{0, 1, 2, 3}, 64)...)
	for name, label := range map[string]string{"x.pdf": "PDF", "x.docx": "Word (DOCX)", "x.xlsx": "Excel (XLSX)"} {
		_, err := Convert(context.Background(), garbage, name, Options{})
		var je *job.Error
		if !errors.As(err, &je) || je.Code != job.E004 || !strings.Contains(je.Message, "damaged") || !strings.Contains(je.Message, label) ||
			!strings.Contains(je.MessageJa, "破損") || je.Name != ErrNameDamaged {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if _, err := Convert(context.Background(), garbage, "x.bin", Options{}); codeOf(err) != job.E004 || !strings.Contains(err.Error(), "unsupported") {
		t.Fatalf("x.bin: %v", err)
	}
}

// TestCachedFailureKeepsItsKind: the same encrypted bytes as pw.xlsx and then pw.docx each
// report their own kind; a cached failure of one kind is not given to a file read as another.
func TestCachedFailureKeepsItsKind(t *testing.T) {
	enc, err := excelize.Encrypt(readCorpus(t, "book.xlsx"), &excelize.Options{Password: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := newConverter(t)
	dataDir, in := t.TempDir(), t.TempDir()
	for _, tc := range []struct{ name, label, labelJa string }{
		{"pw.xlsx", "Excel (XLSX)", "Excel（XLSX）"}, {"pw.docx", "Word (DOCX)", "Word（DOCX）"}, {"pw.xlsx", "Excel (XLSX)", "Excel（XLSX）"},
	} {
		p := filepath.Join(in, tc.name)
		os.WriteFile(p, enc, 0o600)
		_, err := run(t, c, dataDir, Input{Path: p})
		var je *job.Error
		if !errors.As(err, &je) || je.Code != job.E005 || !strings.Contains(je.Message, tc.label) || !strings.Contains(je.MessageJa, tc.labelJa) {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
}

// TestXLSXGannen: a [$-ja-JP-x-gannen] era format shows the first year of an era as 元年, as
// Excel does; the same date without x-gannen stays 1年, and later years are unchanged.
func TestXLSXGannen(t *testing.T) {
	f := excelize.NewFile()
	gannenFmt := `[$-ja-JP-x-gannen]ggge"年"m"月"d"日"`
	plainFmt := `[$-ja-JP]ggge"年"m"月"d"日"`
	g, err := f.NewStyle(&excelize.Style{CustomNumFmt: &gannenFmt})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := f.NewStyle(&excelize.Style{CustomNumFmt: &plainFmt})
	f.SetCellValue("Sheet1", "A1", "元号")
	f.SetCellValue("Sheet1", "B1", "通常")
	f.SetCellValue("Sheet1", "A2", time.Date(2019, 5, 1, 0, 0, 0, 0, time.UTC))
	f.SetCellValue("Sheet1", "B2", time.Date(2019, 5, 1, 0, 0, 0, 0, time.UTC))
	f.SetCellValue("Sheet1", "A3", time.Date(2021, 4, 1, 0, 0, 0, 0, time.UTC))
	f.SetCellValue("Sheet1", "B3", "令和1年のメモ")
	f.SetCellStyle("Sheet1", "A2", "A3", g)
	f.SetCellStyle("Sheet1", "B2", "B2", p)
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	d, err := Convert(context.Background(), buf.Bytes(), "era.xlsx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 令和元年5月1日 | 令和1年5月1日 |", "| 令和3年4月1日 | 令和1年のメモ |"} {
		if !strings.Contains(d.Markdown, want) {
			t.Errorf("missing %q in\n%s", want, d.Markdown)
		}
	}
}
