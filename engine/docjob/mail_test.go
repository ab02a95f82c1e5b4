package docjob

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"mime"
	"strings"
	"testing"
	u16 "unicode/utf16"

	"golang.org/x/text/encoding/japanese"

	"jobdesk/engine/job"
)

func iso2022jp(t *testing.T, s string) []byte {
	t.Helper()
	b, err := japanese.ISO2022JP.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func b64lines(b []byte) string {
	s := base64.StdEncoding.EncodeToString(b)
	var out strings.Builder
	for len(s) > 76 {
		out.WriteString(s[:76] + "\r\n")
		s = s[76:]
	}
	return out.String() + s + "\r\n"
}

// japaneseMail is a mail as Japanese mailers send it: ISO-2022-JP body, RFC 2047 headers in
// ISO-2022-JP and UTF-8, a Shift_JIS CSV attachment with an encoded name, a ZIP attachment, an
// inline logo the HTML body shows (not an attachment) and an attached message.
func japaneseMail(t *testing.T) []byte {
	subj := mime.BEncoding.Encode("ISO-2022-JP", string(iso2022jp(t, "【至急】見積書の送付")))
	from := mime.BEncoding.Encode("UTF-8", "山田 太郎")
	csvName := mime.BEncoding.Encode("UTF-8", "見積.csv")
	var z bytes.Buffer
	zw := zip.NewWriter(&z)
	w, _ := zw.Create("memo.txt")
	w.Write([]byte("ZIPの中のメモ"))
	zw.Close()
	inner := "From: sato@example.jp\r\nTo: yamada@example.jp\r\nSubject: =?UTF-8?B?" + base64.StdEncoding.EncodeToString([]byte("転送元")) +
		"?=\r\nContent-Type: text/plain; charset=UTF-8\r\n\r\n転送された本文です。\r\n"
	var b strings.Builder
	b.WriteString("From: " + from + " <yamada@example.jp>\r\nTo: suzuki@example.jp, =?UTF-8?B?" + base64.StdEncoding.EncodeToString([]byte("佐藤")) + "?= <sato@example.jp>\r\n")
	b.WriteString("Cc: kacho@example.jp\r\nDate: Mon, 02 Dec 2024 10:00:00 +0900\r\nSubject: " + subj + "\r\nMIME-Version: 1.0\r\n")
	b.WriteString("Content-Type: multipart/mixed; boundary=\"OUTER\"\r\n\r\n--OUTER\r\n")
	b.WriteString("Content-Type: multipart/related; boundary=\"REL\"\r\n\r\n--REL\r\nContent-Type: multipart/alternative; boundary=\"ALT\"\r\n\r\n")
	b.WriteString("--ALT\r\nContent-Type: text/plain; charset=ISO-2022-JP\r\nContent-Transfer-Encoding: 7bit\r\n\r\n")
	b.Write(iso2022jp(t, "鈴木様\r\n\r\nお見積書を添付いたします。\r\nよろしくお願いいたします。\r\n"))
	b.WriteString("\r\n--ALT\r\nContent-Type: text/html; charset=Shift_JIS\r\nContent-Transfer-Encoding: base64\r\n\r\n")
	b.WriteString(b64lines(sjis(t, `<p>鈴木様</p><p><img src="cid:logo@x"></p>`)))
	b.WriteString("--ALT--\r\n--REL\r\nContent-Type: image/png\r\nContent-ID: <logo@x>\r\nContent-Transfer-Encoding: base64\r\n\r\n")
	b.WriteString(b64lines([]byte("\x89PNG\r\n\x1a\nlogo")))
	b.WriteString("--REL--\r\n--OUTER\r\nContent-Type: text/csv; charset=Shift_JIS\r\nContent-Disposition: attachment; filename=\"" + csvName + "\"\r\nContent-Transfer-Encoding: base64\r\n\r\n")
	b.WriteString(b64lines(sjis(t, "品名,数量,単価\r\nボールペン,10,120\r\n")))
	b.WriteString("--OUTER\r\nContent-Type: application/zip; name=\"docs.zip\"\r\nContent-Transfer-Encoding: base64\r\n\r\n")
	b.WriteString(b64lines(z.Bytes()))
	b.WriteString("--OUTER\r\nContent-Type: message/rfc822\r\n\r\n" + inner)
	b.WriteString("--OUTER--\r\n")
	return []byte(b.String())
}

// An ISO-2022-JP mail: the header list decoded (RFC 2047 in two charsets), the plain body, and
// every attachment converted as a child — the Shift_JIS CSV as a table, the ZIP's entry, the
// attached message — while the inline logo the HTML body shows is left out and named.
func TestEMLJapanese(t *testing.T) {
	d := convertOK(t, japaneseMail(t), "見積.eml")
	if d.Kind != KindEML {
		t.Fatalf("kind %s", d.Kind)
	}
	wantIn(t, d.Markdown, []string{"# Email Message", "**From:** yamada@example.jp (山田 太郎)",
		"**To:** suzuki@example.jp, sato@example.jp (佐藤)", "**Cc:** kacho@example.jp", "**Subject:** 【至急】見積書の送付",
		"## Content\n\n鈴木様\n\nお見積書を添付いたします。", "### 見積.csv", "| 品名 | 数量 | 単価 |", "| ボールペン | 10 | 120 |",
		"### docs.zip", "ZIPの中のメモ", "### 転送元.eml", "**Subject:** 転送元", "転送された本文です。"}, []string{"=?", "\x1b$B"})
	if st, why := d.Status(); st != StatusReady {
		t.Errorf("status %s: %s", st, why)
	}
	names := map[string]Status{}
	for _, c := range d.Children {
		names[c.Name] = c.Status
	}
	for _, n := range []string{"見積.csv", "docs.zip", "docs.zip/memo.txt", "転送元.eml"} {
		if names[n] != StatusReady {
			t.Errorf("child %s: %q (children %+v)", n, names[n], d.Children)
		}
	}
	if len(d.Notes) == 0 || !strings.Contains(d.Notes[0], "part.png") {
		t.Errorf("the inline logo is not named as left out: %v", d.Notes)
	}
	// detected from the content without the .eml name
	if k := Detect(japaneseMail(t), "message"); k != KindEML {
		t.Errorf("Detect without a name: %s", k)
	}
}

// A mail with only an HTML body renders it as Markdown; an attachment of a type JobDesk does not
// convert is a failed child and the mail is partial, naming it; messages attached inside
// messages deeper than the nesting limit fail E003 as children.
func TestEMLHTMLBodyFailedAttachmentAndNesting(t *testing.T) {
	mail := "From: a@example.jp\r\nTo: b@example.jp\r\nSubject: html\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n" +
		"--B\r\nContent-Type: text/html; charset=UTF-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n<h2>=E8=A6=8B=E5=87=BA=E3=81=97</h2><table><tr><td>A</td><td>B</td></tr></table>\r\n" +
		"--B\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=tool.exe\r\n\r\nMZ\x00\x01binary\r\n--B--\r\n"
	d := convertOK(t, []byte(mail), "m.eml")
	wantIn(t, d.Markdown, []string{"## 見出し", "| A | B |", "### tool.exe", "not converted"}, nil)
	if st, why := d.Status(); st != StatusPartial || !strings.Contains(why, "tool.exe") {
		t.Errorf("status %s %q", st, why)
	}
	nested := "From: x@example.jp\r\nSubject: 4\r\n\r\n最深部\r\n"
	for i := 3; i >= 1; i-- {
		nested = fmt.Sprintf("From: x@example.jp\r\nSubject: %d\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=N%d\r\n\r\n--N%d\r\nContent-Type: text/plain\r\n\r\n本文%d\r\n--N%d\r\nContent-Type: message/rfc822\r\n\r\n%s\r\n--N%d--\r\n", i, i, i, i, i, nested, i)
	}
	d = convertOK(t, []byte(nested), "n.eml")
	failedE003 := false
	for _, c := range d.Children {
		if c.Status == StatusFailed && c.Code == string(job.E003) {
			failedE003 = true
		}
	}
	if st, _ := d.Status(); st != StatusPartial || !failedE003 {
		t.Errorf("nesting: %s %+v", st, d.Children)
	}
}

// msgProp helpers build the streams of an Outlook message.
func msgUnicode(id uint16, s string) *cfbNode {
	u := u16.Encode([]rune(s))
	b := make([]byte, 2*len(u)+2)
	for i, v := range u {
		binary.LittleEndian.PutUint16(b[2*i:], v)
	}
	return cfbStreamNode(fmt.Sprintf("__substg1.0_%04X001F", id), b)
}

func msgString8(id uint16, b []byte) *cfbNode {
	return cfbStreamNode(fmt.Sprintf("__substg1.0_%04X001E", id), append(b, 0))
}

func msgBinary(id uint16, b []byte) *cfbNode {
	return cfbStreamNode(fmt.Sprintf("__substg1.0_%04X0102", id), b)
}

// msgPropStream is a property stream with header bytes of header and fixed properties.
func msgPropStream(header int, longs map[uint16]uint32, times map[uint16]int64) *cfbNode {
	b := make([]byte, header)
	add := func(typ, id uint16, v uint64) {
		e := make([]byte, 16)
		binary.LittleEndian.PutUint16(e, typ)
		binary.LittleEndian.PutUint16(e[2:], id)
		binary.LittleEndian.PutUint64(e[8:], v)
		b = append(b, e...)
	}
	for id, v := range longs {
		add(0x0003, id, uint64(v))
	}
	for id, v := range times {
		add(0x0040, id, uint64(v))
	}
	return cfbStreamNode("__properties_version1.0", b)
}

// lzfuLiteral compresses data as LZFu with one back-reference into the initial dictionary
// ("{\rtf1" at offset 0) and literals for the rest, ending with the end-of-stream reference.
func lzfuLiteral(data []byte) []byte {
	var out []byte
	type tok struct {
		ref bool
		b   []byte
	}
	toks := []tok{{ref: true, b: []byte{0x00, 0x04}}} // offset 0, length 6: "{\rtf1"
	for _, c := range data {
		toks = append(toks, tok{b: []byte{c}})
	}
	wp := len(lzfuDict) + 6 + len(data)
	toks = append(toks, tok{ref: true, b: []byte{byte((wp % 4096) >> 4), byte((wp % 4096) << 4)}})
	for i := 0; i < len(toks); i += 8 {
		var ctl byte
		var body []byte
		for j := 0; j < 8 && i+j < len(toks); j++ {
			if toks[i+j].ref {
				ctl |= 1 << j
			}
			body = append(body, toks[i+j].b...)
		}
		out = append(out, ctl)
		out = append(out, body...)
	}
	h := make([]byte, 16)
	binary.LittleEndian.PutUint32(h, uint32(len(out)+12))
	binary.LittleEndian.PutUint32(h[4:], uint32(6+len(data)))
	binary.LittleEndian.PutUint32(h[8:], 0x75465A4C)
	return append(h, out...)
}

// makeMSG builds an Outlook message: sender, To and Cc recipients, a date, a body (PR_BODY or
// only compressed RTF), a CSV attachment and an attached message.
func makeMSG(t *testing.T, rtfOnly bool) []byte {
	const filetime2024 = 133771716000000000 // 2024-11-27 09:00:00 UTC
	root := []*cfbNode{
		msgPropStream(32, map[uint16]uint32{prCodepage: 932}, map[uint16]int64{prClientSubmitTime: filetime2024}),
		msgUnicode(prSubject, "【議事録】定例会議"),
		msgUnicode(prSenderName, "山田 太郎"),
		msgUnicode(prSenderSMTP, "yamada@example.jp"),
		cfbStorageNode("__recip_version1.0_#00000000", msgPropStream(8, map[uint16]uint32{prRecipientType: 1}, nil),
			msgUnicode(prDisplayName, "鈴木 花子"), msgUnicode(prSMTPAddress, "suzuki@example.jp")),
		cfbStorageNode("__recip_version1.0_#00000001", msgPropStream(8, map[uint16]uint32{prRecipientType: 2}, nil),
			msgString8(prDisplayName, sjis(t, "課長")), msgUnicode(prSMTPAddress, "kacho@example.jp")),
		cfbStorageNode("__attach_version1.0_#00000000", msgPropStream(8, nil, nil),
			msgUnicode(prAttachLongFilename, "出席者.csv"), msgBinary(prAttachDataBin, sjis(t, "氏名,部署\r\n山田,総務\r\n"))),
		cfbStorageNode("__attach_version1.0_#00000001", msgPropStream(8, map[uint16]uint32{prAttachMethod: 5}, nil),
			msgUnicode(prDisplayName, "前回の案内"),
			cfbStorageNode("__substg1.0_3701000D", msgPropStream(24, nil, nil), msgUnicode(prSubject, "前回の案内"), msgUnicode(prBody, "前回の本文です。"))),
	}
	if rtfOnly {
		var hex strings.Builder
		for _, c := range sjis(t, "間違") {
			fmt.Fprintf(&hex, "\\'%02x", c)
		}
		rtf := `{\rtf1\ansi\ansicpg932\deff0{\fonttbl{\f0 MS Gothic;}}\f0 ` + hex.String() + `\par \u26412?\u25991?\par}`
		root = append(root, msgBinary(prRTFCompressed, lzfuLiteral([]byte(rtf[6:]))))
	} else {
		root = append(root, msgUnicode(prBody, "各位\r\n\r\n定例会議の議事録です。\r\n"))
	}
	return makeCFB(root...)
}

// An Outlook message built as Outlook writes it: the sender, To and Cc from the recipient
// table (a Shift_JIS name among them), the date, the body, the CSV attachment as a table and
// the attached message as a mail of its own.
func TestMSGOutlook(t *testing.T) {
	data := makeMSG(t, false)
	if k := Detect(data, "x"); k != KindMSG {
		t.Fatalf("Detect: %s", k)
	}
	d := convertOK(t, data, "議事録.msg")
	wantIn(t, d.Markdown, []string{"# Email Message", "**From:** yamada@example.jp (山田 太郎)", "**To:** suzuki@example.jp (鈴木 花子)",
		"**Cc:** kacho@example.jp (課長)", "**Date:** Wed, 27 Nov 2024 09:00:00 +0000", "**Subject:** 【議事録】定例会議",
		"## Content\n\n各位\n\n定例会議の議事録です。", "### 出席者.csv", "| 氏名 | 部署 |", "| 山田 | 総務 |",
		"### 前回の案内", "**Subject:** 前回の案内", "前回の本文です。"}, nil)
	if st, why := d.Status(); st != StatusReady || len(d.Children) != 2 {
		t.Errorf("status %s %q, children %+v", st, why, d.Children)
	}
}

// A message whose only body is compressed RTF (LZFu): decompressed and read as text, \'hh bytes
// in code page 932 and \uN characters included.
func TestMSGCompressedRTF(t *testing.T) {
	d := convertOK(t, makeMSG(t, true), "rtf.msg")
	wantIn(t, d.Markdown, []string{"## Content\n\n間違\n本文"}, []string{"fonttbl", "MS Gothic", `\par`})
	if _, err := decompressRTF([]byte("short")); err == nil {
		t.Error("a short compressed RTF decompressed")
	}
}

// A damaged compound file named .msg is E004, never a panic.
func TestMSGDamaged(t *testing.T) {
	data := makeMSG(t, false)
	for _, cut := range []int{600, len(data) / 2, len(data) - 100} {
		_, err := Convert(context.Background(), data[:cut], "cut.msg", Options{})
		if err != nil && codeOf(err) != job.E004 {
			t.Errorf("cut at %d: %v", cut, err)
		}
	}
}

func FuzzMail(f *testing.F) {
	f.Add([]byte("From: a@b\r\nSubject: x\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n--B\r\nContent-Type: message/rfc822\r\n\r\nFrom: c@d\r\n\r\nhi\r\n--B--\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		convertEML(context.Background(), data, Options{})
		decompressRTF(data)
		rtfText(data)
	})
}

// RTF that encapsulates HTML (\fromhtml1, what Outlook stores for HTML mail) gives back the
// HTML: tags from \*\htmltag groups, text outside \htmlrtf runs, RTF-only text dropped.
func TestRTFEncapsulatedHTML(t *testing.T) {
	rtf := `{\rtf1\ansi\ansicpg932\fromhtml1 {\fonttbl{\f0 Arial;}}{\*\htmltag19 <html>}{\*\htmltag34 <body>}{\*\htmltag64 <p>}\htmlrtf {\htmlrtf0 ` +
		`\'8c\'a9\'8f\'91{\*\htmltag84 <b>}\htmlrtf\b \htmlrtf0 Total\htmlrtf\b0 \htmlrtf0{\*\htmltag92 </b>}` +
		`\htmlrtf\par\htmlrtf0}{\*\htmltag72 </p>}{\*\htmltag42 </body>}{\*\htmltag27 </html>}}`
	html, text := rtfText([]byte(rtf))
	if text != "" || !strings.Contains(html, "<p>") || !strings.Contains(html, "見書<b>Total</b>") {
		t.Fatalf("html %q text %q", html, text)
	}
	md := htmlMarkdown(html, false)
	if !strings.Contains(md, "**Total**") || strings.Contains(md, "Arial") {
		t.Fatalf("markdown %q", md)
	}
}

// BenchmarkEML converts the Japanese mail with its CSV, ZIP and attached-message children.
func BenchmarkEML(b *testing.B) {
	data := japaneseMail(&testing.T{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Convert(context.Background(), data, "m.eml", Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMSG converts the Outlook message with its attachments.
func BenchmarkMSG(b *testing.B) {
	data := makeMSG(&testing.T{}, false)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Convert(context.Background(), data, "m.msg", Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// A web page saved as one MIME file (.mht) is the page, not a mail: its quoted-printable
// Shift_JIS HTML rendered as Markdown, the saved images left out and counted in the notes.
func TestMHTMLSavedPage(t *testing.T) {
	var qp strings.Builder
	for _, c := range sjis(t, `<html><head><title>製品カタログ</title></head><body><h2>新製品</h2><p>価格は<b>1,000円</b>です。</p><img src="logo.png" alt="ロゴ"></body></html>`) {
		if c >= 0x80 || c == '=' {
			fmt.Fprintf(&qp, "=%02X", c)
		} else {
			qp.WriteByte(c)
		}
	}
	mht := "From: <Saved by Blink>\r\nSnapshot-Content-Location: https://example.jp/catalog\r\nSubject: =?utf-8?B?" + base64.StdEncoding.EncodeToString([]byte("製品カタログ")) +
		"?=\r\nDate: Mon, 2 Dec 2024 10:00:00 +0900\r\nMIME-Version: 1.0\r\nContent-Type: multipart/related; type=\"text/html\"; boundary=\"----MultipartBoundary\"\r\n\r\n" +
		"------MultipartBoundary\r\nContent-Type: text/html; charset=Shift_JIS\r\nContent-Transfer-Encoding: quoted-printable\r\nContent-Location: https://example.jp/catalog\r\n\r\n" +
		qp.String() + "\r\n------MultipartBoundary\r\nContent-Type: image/png\r\nContent-Transfer-Encoding: base64\r\nContent-Location: https://example.jp/logo.png\r\n\r\niVBORw0KGgo=\r\n------MultipartBoundary--\r\n"
	for _, name := range []string{"catalog.mht", "catalog"} {
		d := convertOK(t, []byte(mht), name)
		if d.Kind != KindMHTML {
			t.Fatalf("%s: kind %s", name, d.Kind)
		}
		wantIn(t, d.Markdown, []string{"# 製品カタログ", "## 新製品", "価格は**1,000円**です。", "![ロゴ](logo.png)"}, []string{"Email Message", "=8", "iVBOR"})
		if st, _ := d.Status(); st != StatusReady || len(d.Notes) != 1 {
			t.Errorf("%s: %s %v", name, st, d.Notes)
		}
	}
}

// An Outlook message whose body is only PR_BODY_HTML (Shift_JIS bytes with a meta charset) gives
// that HTML as Markdown; an inline image the HTML shows by cid: and a hidden attachment are left
// out and named, not failed children.
func TestMSGHTMLBodyAndInlineImage(t *testing.T) {
	html := sjis(t, `<html><head><meta charset="shift_jis"></head><body><h3>ご案内</h3><p>詳細は<a href="https://example.jp">こちら</a>。</p><img src="cid:img001"></body></html>`)
	data := makeCFB(
		msgPropStream(32, nil, nil),
		msgUnicode(prSubject, "HTML だけの本文"),
		msgBinary(prBodyHTML, html),
		cfbStorageNode("__attach_version1.0_#00000000", msgPropStream(8, nil, nil),
			msgUnicode(prAttachLongFilename, "image001.png"), msgUnicode(prAttachContentID, "img001"), msgBinary(prAttachDataBin, []byte("\x89PNG\r\n\x1a\n"))),
		cfbStorageNode("__attach_version1.0_#00000001", msgPropStream(8, map[uint16]uint32{prAttachmentHidden: 1}, nil),
			msgUnicode(prAttachLongFilename, "hidden.bin"), msgBinary(prAttachDataBin, []byte{1, 2, 3})),
	)
	d := convertOK(t, data, "html.msg")
	wantIn(t, d.Markdown, []string{"**Subject:** HTML だけの本文", "### ご案内", "詳細は[こちら](https://example.jp)。"}, []string{"image001.png"})
	if len(d.Notes) == 0 || !strings.Contains(d.Notes[0], "image001.png") || !strings.Contains(d.Notes[0], "hidden.bin") {
		t.Errorf("notes %v", d.Notes)
	}
	if st, why := d.Status(); st != StatusReady || len(d.Children) != 0 {
		t.Errorf("status %s %q, children %+v", st, why, d.Children)
	}
}
