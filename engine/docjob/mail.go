package docjob

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"

	"jobdesk/engine/job"
	"jobdesk/engine/mdtext"
)

// mailMessage is an e-mail read from EML or MSG: its header fields, its bodies and its
// attachments, rendered alike by renderMail.
type mailMessage struct {
	From, To, Cc, Date, Subject string
	Text, HTML                  string // bodies (either may be empty)
	BodyFrom                    string // where the body came from: "", "html", "rtf"
	Attachments                 []mailAttachment
	Skipped                     []string // inline images and hidden parts left out
}

// mailAttachment is one attached file, or an attached message (Message set, Data nil).
type mailAttachment struct {
	Name    string
	Data    []byte
	Message *mailMessage
	Err     error // the attachment could not be read out of the mail
}

// maxMailParts bounds the MIME parts and nesting read from one message, so a crafted mail
// cannot make the reader loop or recurse without end.
const (
	maxMailParts = 500
	maxMailDepth = 20
)

// renderMail writes a message as Markdown: "# Email Message", the header fields, "## Content"
// with the body, and each attachment converted as a child under "## Attachments", as a ZIP's
// entries are (same size, total and nesting limits; a failed attachment makes the mail
// partial).
func renderMail(ctx context.Context, m *mailMessage, kind Kind, opt Options) (*Doc, error) {
	depth := opt.depth + 1
	if depth > MaxZipDepth {
		return nil, job.Errorf(job.E003, "attachments are nested more than %d deep", MaxZipDepth).
			WithJa(fmt.Sprintf("添付ファイルの入れ子が深すぎます（上限 %d 階層）。", MaxZipDepth)).WithName(ErrNameTooLarge)
	}
	var b strings.Builder
	b.WriteString("# Email Message\n\n")
	for _, f := range []struct{ k, v string }{{"From", m.From}, {"To", m.To}, {"Cc", m.Cc}, {"Date", m.Date}, {"Subject", m.Subject}} {
		if v := strings.TrimSpace(Clean(f.v)); v != "" {
			fmt.Fprintf(&b, "**%s:** %s  \n", f.k, escapeInline(oneLine(v)))
		}
	}
	b.WriteString("\n## Content\n\n")
	body := EscapeMarkdown(strings.TrimSpace(Clean(m.Text)))
	if body == "" && m.HTML != "" {
		body = strings.TrimSpace(htmlMarkdown(m.HTML, false))
	}
	b.WriteString(body)
	b.WriteString("\n\n")
	d := &Doc{Kind: kind, Method: MethodNative, Pages: 1}
	header := func(v string) string { return oneLine(strings.TrimSpace(Clean(v))) }
	d.Mail = &MailHeader{From: header(m.From), To: header(m.To), Cc: header(m.Cc), Date: header(m.Date), Subject: header(m.Subject)}
	if len(m.Attachments) > 0 {
		b.WriteString("## Attachments\n\n")
	}
	if opt.budget == nil {
		bud := int64(MaxTotalSize)
		opt.budget = &bud
	}
	for i, a := range m.Attachments {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name := a.Name
		if name == "" {
			name = fmt.Sprintf("attachment-%d", i+1)
		}
		child := Child{Name: name}
		var cd *Doc
		err := a.Err
		switch {
		case err != nil:
		case a.Message != nil:
			copt := opt
			copt.depth, copt.Progress = depth, nil
			child.Kind = kind
			cd, err = renderMail(ctx, a.Message, kind, copt)
		case int64(len(a.Data)) > MaxFileSize:
			err = errTooLarge("the attachment", "添付ファイル", int64(len(a.Data)), MaxFileSize)
		case int64(len(a.Data)) > *opt.budget:
			err = errTooLarge("the attachments of the mail", "メールの添付ファイルの合計", MaxTotalSize+1, MaxTotalSize)
		default:
			*opt.budget -= int64(len(a.Data))
			child.Kind = Detect(a.Data, name)
			copt := opt
			copt.depth, copt.Progress = depth, nil
			copt.noAssets = true // an attachment's pictures are not written: their alt text stands in
			cd, err = ConvertKind(ctx, a.Data, name, child.Kind, copt)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			je := job.AsError(err)
			child.Status, child.Code, child.Reason, child.ReasonJa = StatusFailed, string(je.Code), je.Message, je.MessageJa
			fmt.Fprintf(&b, "### %s\n\n> (not converted: %s / 変換できませんでした: %s)\n\n", escapeInline(name), je.Message, je.MessageJa)
		} else {
			st, why := cd.Status()
			child.Status, child.Reason, child.ReasonJa, child.Chars = st, why, cd.ReasonJa(), utf8.RuneCountInString(cd.Markdown)
			fmt.Fprintf(&b, "### %s\n\n", escapeInline(name))
			b.WriteString(demoteHeadings(strings.TrimSpace(cd.Markdown), 3))
			b.WriteString("\n\n")
			for _, c := range cd.Children {
				c.Name = name + "/" + c.Name
				d.Children = append(d.Children, c)
			}
		}
		d.Children = append(d.Children, child)
	}
	if len(m.Skipped) > 0 {
		d.Notes = append(d.Notes, "left out (inline images of the body, hidden attachments): "+strings.Join(m.Skipped, ", "))
	}
	for _, c := range d.Children {
		if c.Status != StatusReady {
			d.Method = MethodPartial
		}
	}
	d.Markdown = strings.TrimRight(b.String(), "\n") + "\n"
	return d, nil
}

// demoteHeadings pushes the ATX headings of md (outside code fences) down by n levels, at
// most to level 6, so an attachment's headings sit under its own. A PDF's page markers are
// pushed down with them ("<!-- Page 3 -->" becomes "<!-- attachment page 3 -->"): the pages of
// an attachment are no pages of the mail.
func demoteHeadings(md string, n int) string {
	lines := strings.Split(md, "\n")
	fence := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			fence = !fence
		}
		if !fence && mdtext.PageMarker.MatchString(l) {
			lines[i] = "<!-- attachment page " + l[len("<!-- Page "):]
			continue
		}
		if fence || !strings.HasPrefix(l, "#") {
			continue
		}
		h := len(l) - len(strings.TrimLeft(l, "#"))
		if h > 6 || !strings.HasPrefix(l[h:], " ") {
			continue
		}
		lines[i] = strings.Repeat("#", min(6, h+n)) + l[h:]
	}
	return strings.Join(lines, "\n")
}

// charsetReader decodes a MIME charset: every WHATWG label (iso-2022-jp, shift_jis, euc-jp,
// utf-8, …) plus CP932's own names.
func charsetReader(label string, r io.Reader) (io.Reader, error) {
	if e := lookupCharset(label); e != nil {
		return e.NewDecoder().Reader(r), nil
	}
	return nil, fmt.Errorf("unknown charset %q", label)
}

func lookupCharset(label string) encoding.Encoding {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "cp932", "ms932", "windows-31j", "x-sjis", "sjis", "shift-jis", "ms_kanji":
		return japanese.ShiftJIS
	case "iso-2022-jp-2", "iso-2022-jp-3", "iso-2022-jp-ext":
		return japanese.ISO2022JP
	}
	e, _ := charset.Lookup(label)
	return e
}

var wordDecoder = &mime.WordDecoder{CharsetReader: charsetReader}

// decodeHeader turns a header value into text: RFC 2047 encoded words in any charset, and raw
// 8-bit or ISO-2022-JP bytes that some Japanese mailers write without encoding.
func decodeHeader(v string) string {
	if s, err := wordDecoder.DecodeHeader(v); err == nil {
		v = s
	}
	return decodeRaw([]byte(v), "")
}

// decodeAddresses writes an address header as "address (name), …" (joinAddress), or decoded
// as it is when it does not parse as addresses.
func decodeAddresses(v string) string {
	if strings.TrimSpace(v) == "" {
		return ""
	}
	p := mail.AddressParser{WordDecoder: wordDecoder}
	list, err := p.ParseList(v)
	if err != nil || len(list) == 0 {
		return decodeHeader(v)
	}
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = joinAddress(a.Name, a.Address)
	}
	return strings.Join(out, ", ")
}

// decodeRaw decodes body or header bytes in label's charset; with no or an unknown label,
// ISO-2022-JP by its escape sequences, else DecodeText's rule (UTF-8, CP932, EUC-JP).
func decodeRaw(b []byte, label string) string {
	if e := lookupCharset(label); e != nil && label != "" {
		if s, err := e.NewDecoder().Bytes(b); err == nil {
			return string(s)
		}
	}
	if bytes.Contains(b, []byte("\x1b$B")) || bytes.Contains(b, []byte("\x1b$@")) || bytes.Contains(b, []byte("\x1b(J")) {
		if s, err := japanese.ISO2022JP.NewDecoder().Bytes(b); err == nil {
			return string(s)
		}
	}
	dt := decodeText(b)
	return dt.text
}

// convertEML reads an Internet message (RFC 5322, MIME) and renders it with renderMail.
func convertEML(ctx context.Context, data []byte, opt Options) (*Doc, error) {
	m, err := parseEML(data, 0)
	if err != nil {
		return nil, errDamaged(KindEML, err)
	}
	return renderMail(ctx, m, KindEML, opt)
}

// convertMHTML renders a web page saved as one MIME file (.mht, .mhtml): its HTML part through
// the HTML path, titled by the page (or the file's Subject); the images and styles saved with it
// are left out, and named in the notes.
func convertMHTML(data []byte) (*Doc, error) {
	m, err := parseEML(data, 0)
	if err != nil {
		return nil, errDamaged(KindMHTML, err)
	}
	var md string
	switch {
	case m.HTML != "":
		md = htmlMarkdown(m.HTML, true)
	case m.Text != "":
		md = strings.TrimSpace(Clean(m.Text)) + "\n"
	default:
		return nil, errDamaged(KindMHTML, reason("the web archive holds no page"))
	}
	if !hasH1(md) && strings.TrimSpace(m.Subject) != "" {
		md = "# " + oneLine(m.Subject) + "\n\n" + md
	}
	d := &Doc{Kind: KindMHTML, Markdown: md, Method: MethodNative, Pages: 1}
	var left []string
	for _, a := range m.Attachments {
		left = append(left, a.Name)
	}
	left = append(left, m.Skipped...)
	if len(left) > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%d saved resources (images, styles) left out", len(left)))
	}
	return d, nil
}

// parseEML parses one message; depth counts messages attached inside messages.
func parseEML(data []byte, depth int) (*mailMessage, error) {
	// The header is parsed on its own and the body sliced from data, so a large mail is not
	// copied once more.
	hdrEnd, sep := bytes.Index(data, []byte("\r\n\r\n")), 4
	if i := bytes.Index(data, []byte("\n\n")); i >= 0 && (hdrEnd < 0 || i < hdrEnd) {
		hdrEnd, sep = i, 2
	}
	if hdrEnd < 0 {
		hdrEnd, sep = len(data), 0
	}
	msg, err := mail.ReadMessage(bufio.NewReader(bytes.NewReader(append(data[:hdrEnd:hdrEnd], "\r\n\r\n"...))))
	if err != nil {
		return nil, reason("the mail header cannot be read")
	}
	h := msg.Header
	m := &mailMessage{From: decodeAddresses(h.Get("From")), To: decodeAddresses(h.Get("To")), Cc: decodeAddresses(h.Get("Cc")),
		Date: h.Get("Date"), Subject: decodeHeader(h.Get("Subject"))}
	body := data[hdrEnd+sep:]
	parts := 0
	w := &emlWalker{m: m, parts: &parts, depth: depth}
	w.part(textproto.MIMEHeader(h), body, 0, false)
	// Inline images the HTML body shows (cid:) are part of the body, not attachments.
	var kept []mailAttachment
	for i, a := range m.Attachments {
		if cid := w.cids[i]; cid != "" && strings.Contains(m.HTML, "cid:"+cid) {
			m.Skipped = append(m.Skipped, a.Name)
			continue
		}
		kept = append(kept, a)
	}
	m.Attachments = kept
	return m, nil
}

type emlWalker struct {
	m     *mailMessage
	parts *int
	depth int
	cids  map[int]string // attachment index → its Content-ID
}

// part reads one MIME part: multiparts are walked, text bodies kept (the first plain and the
// first HTML), everything else (and anything with a file name or disposition attachment)
// becomes an attachment; attached messages (message/rfc822) are parsed as messages.
func (w *emlWalker) part(h textproto.MIMEHeader, body []byte, level int, inAlternative bool) {
	*w.parts++
	if *w.parts > maxMailParts || level > maxMailDepth {
		return
	}
	ct, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		ct, params = "text/plain", map[string]string{}
	}
	if strings.HasPrefix(ct, "multipart/") {
		mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err != nil {
				return
			}
			b, err := io.ReadAll(io.LimitReader(p, MaxFileSize+1))
			if err != nil {
				return
			}
			w.part(p.Header, b, level+1, ct == "multipart/alternative")
		}
	}
	body = decodeTransfer(h.Get("Content-Transfer-Encoding"), body)
	disp, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	name := dparams["filename"]
	if name == "" {
		name = params["name"]
	}
	name = decodeHeader(name)
	isAttachment := disp == "attachment" || name != ""
	switch {
	case ct == "message/rfc822" && w.depth < maxMailDepth:
		sub, err := parseEML(body, w.depth+1)
		a := mailAttachment{Name: name, Message: sub, Err: err}
		if a.Name == "" && sub != nil {
			a.Name = sub.Subject + ".eml"
		}
		if err != nil {
			a.Err = errDamaged(KindEML, err)
		}
		w.add(a, "")
	case !isAttachment && ct == "text/plain" && w.m.Text == "":
		w.m.Text = decodeRaw(body, params["charset"])
	case !isAttachment && ct == "text/html" && w.m.HTML == "":
		w.m.HTML = decodeRaw(body, params["charset"])
		if !utf8.Valid([]byte(w.m.HTML)) {
			w.m.HTML, _, _ = decodeHTML(body)
		}
	case !isAttachment && strings.HasPrefix(ct, "text/"):
		// further text alternatives (text/enriched, a second plain part): the first is kept
	default:
		if name == "" {
			name = "part" + extByType(ct)
		}
		w.add(mailAttachment{Name: name, Data: body}, strings.Trim(h.Get("Content-ID"), "<> "))
	}
}

func (w *emlWalker) add(a mailAttachment, cid string) {
	if w.cids == nil {
		w.cids = map[int]string{}
	}
	w.cids[len(w.m.Attachments)] = cid
	w.m.Attachments = append(w.m.Attachments, a)
}

func extByType(ct string) string {
	switch ct {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "application/pdf":
		return ".pdf"
	}
	if exts, _ := mime.ExtensionsByType(ct); len(exts) > 0 {
		return exts[0]
	}
	return ".bin"
}

// decodeTransfer undoes a Content-Transfer-Encoding (base64, quoted-printable); bytes that do
// not decode are kept as far as they went.
func decodeTransfer(cte string, body []byte) []byte {
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "base64":
		// The decoder skips line breaks; what decoded before a bad byte is kept.
		out := bytes.NewBuffer(make([]byte, 0, base64.StdEncoding.DecodedLen(len(body))))
		io.Copy(out, base64.NewDecoder(base64.StdEncoding, bytes.NewReader(bytes.TrimRight(body, " \t\r\n"))))
		return out.Bytes()
	case "quoted-printable":
		out, _ := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(body)))
		return out
	}
	return body
}
