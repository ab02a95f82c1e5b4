package docjob

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strings"
)

// Kinds of mail, web pages, e-books, data files and images. They are detected from the
// content (Detect), the extension only breaking ties.
const (
	KindHTML     Kind = "html"
	KindEPUB     Kind = "epub"
	KindJSON     Kind = "json"
	KindXML      Kind = "xml"
	KindNotebook Kind = "ipynb"
	KindFeed     Kind = "feed" // RSS or Atom
	KindEML      Kind = "eml"
	KindMSG      Kind = "msg"
	KindMHTML    Kind = "mhtml" // a web page saved with its images as one MIME file (.mht)
)

func init() {
	for k, l := range map[Kind][2]string{
		KindHTML: {"HTML", "HTML"}, KindEPUB: {"EPUB", "EPUB"}, KindJSON: {"JSON", "JSON"}, KindXML: {"XML", "XML"},
		KindNotebook: {"Jupyter notebook", "Jupyter ノートブック"}, KindFeed: {"RSS/Atom feed", "RSS/Atom フィード"},
		KindEML: {"e-mail (EML)", "メール（EML）"}, KindMSG: {"Outlook mail (MSG)", "Outlook メール（MSG）"},
		KindMHTML: {"web archive (MHTML)", "Web アーカイブ（MHTML）"},
	} {
		kindLabels[k], kindLabelsJa[k] = l[0], l[1]
	}
}

// moreSupported are the kinds of this file that JobDesk converts (Kind.Supported).
var moreSupported = map[Kind]bool{
	KindHTML: true, KindEPUB: true, KindJSON: true, KindXML: true, KindNotebook: true, KindFeed: true,
	KindEML: true, KindMSG: true, KindImage: true, KindMHTML: true,
}

// convertMore converts the kinds of this file; any other kind is unsupported. file is as for
// convertSafely.
func convertMore(ctx context.Context, data []byte, name string, kind Kind, opt Options, file markdownFile) (*Doc, error) {
	switch kind {
	case KindHTML:
		return convertHTML(data)
	case KindEPUB:
		return convertEPUB(ctx, data)
	case KindJSON, KindNotebook:
		return convertJSON(data, kind)
	case KindXML, KindFeed:
		return convertXML(data, kind, file)
	case KindEML:
		return convertEML(ctx, data, opt)
	case KindMHTML:
		return convertMHTML(data)
	case KindMSG:
		return convertMSG(ctx, data, opt)
	case KindImage:
		return convertImage(ctx, data, name, opt)
	}
	return nil, errUnsupported(kind)
}

// extKinds are the kinds a file name's extension claims.
var extKinds = map[string]Kind{
	".pdf": KindPDF, ".docx": KindDOCX, ".docm": KindDOCX, ".xlsx": KindXLSX, ".xlsm": KindXLSX, ".zip": KindZIP,
	".html": KindHTML, ".htm": KindHTML, ".xhtml": KindHTML, ".epub": KindEPUB, ".json": KindJSON,
	".ipynb": KindNotebook, ".xml": KindXML, ".rss": KindFeed, ".atom": KindFeed, ".eml": KindEML, ".msg": KindMSG, ".mht": KindMHTML, ".mhtml": KindMHTML,
	".png": KindImage, ".jpg": KindImage, ".jpeg": KindImage, ".gif": KindImage, ".tif": KindImage, ".tiff": KindImage,
	".pptx": KindPPTX, ".xls": KindXLS, ".doc": KindDOC,
}

// ClaimedKind is the kind a file name's extension claims ("" when it claims none JobDesk knows).
func ClaimedKind(name string) Kind {
	return extKinds[strings.ToLower(path.Ext(strings.ReplaceAll(name, "\\", "/")))]
}

// binaryKinds are kinds whose files are never text: a "report.pdf" that holds text or unknown
// bytes is not a PDF and fails as damaged instead of converting as something else. .xls and .doc
// are not among them: accounting and groupware systems save HTML tables, TSV or RTF under those
// names, which are converted as what they are.
var binaryKinds = map[Kind]bool{
	KindPDF: true, KindDOCX: true, KindXLSX: true, KindZIP: true, KindEPUB: true, KindMSG: true, KindImage: true,
	KindPPTX: true,
}

// mismatch returns the error for content that is not what its name claims: bytes of no known
// type, or text, under the name of a binary format (E004 "the content is not a PDF file").
func mismatch(kind Kind, name string) error {
	claimed := ClaimedKind(name)
	if claimed == "" || claimed == kind {
		return nil
	}
	if kind == KindUnknown || (binaryKinds[claimed] && !binaryKinds[kind] && kind != KindOffice && kind != KindOLE) {
		return errNotClaimed(claimed, kind)
	}
	return nil
}

// errNotClaimed is E004 for a file whose content is not the type its name says.
func errNotClaimed(claimed, found Kind) error {
	e := errDamaged(claimed, reason(fmt.Sprintf("the content is not a %s file", claimed.Label())))
	if found != KindUnknown {
		e.Cause = fmt.Sprintf("the content is not a %s file (it is %s)", claimed.Label(), found.Label())
	}
	return e.WithJa(fmt.Sprintf("%sファイルが破損しているか、中身が%sファイルではありません。拡張子と中身が合っているか確認してください。", claimed.LabelJa(), claimed.LabelJa()))
}

// sniffText tells web pages, XML, feeds, JSON, notebooks and mail from plain text by their
// first bytes; "" when the text is none of them. Text named .txt, .md, .log, .csv or .tsv stays
// text whatever it holds.
func sniffText(data []byte, ext string) Kind {
	switch ext {
	case ".txt", ".text", ".md", ".markdown", ".log", ".csv", ".tsv":
		return ""
	}
	head := data
	if len(head) > 4096 {
		head = head[:4096]
	}
	head = bytes.TrimPrefix(head, []byte{0xEF, 0xBB, 0xBF})
	t := bytes.TrimLeft(head, " \t\r\n")
	lower := bytes.ToLower(t)
	switch {
	case len(t) > 0 && (t[0] == '{' || t[0] == '['):
		if ext == ".ipynb" || (bytes.Contains(head, []byte(`"cells"`)) && bytes.Contains(data, []byte(`"nbformat"`))) {
			return KindNotebook
		}
		if ext == ".json" || ext == "" || looksJSONStart(t) {
			return KindJSON
		}
	case bytes.HasPrefix(lower, []byte("<!doctype html")), bytes.HasPrefix(lower, []byte("<html")),
		bytes.HasPrefix(lower, []byte("<head")), bytes.HasPrefix(lower, []byte("<body")):
		return KindHTML
	case bytes.HasPrefix(t, []byte("<")):
		if root := xmlRoot(lower); root != "" {
			switch root {
			case "rss", "feed", "rdf:rdf":
				return KindFeed
			case "html":
				return KindHTML
			}
			return KindXML
		}
		if ext == ".html" || ext == ".htm" || ext == ".xhtml" || bytes.Contains(lower, []byte("<body")) || bytes.Contains(lower, []byte("<div")) || bytes.Contains(lower, []byte("<p>")) {
			return KindHTML
		}
	}
	if looksMail(head) || (ext == ".eml" && bytes.Contains(head, []byte(":"))) {
		if ext == ".mht" || ext == ".mhtml" || (bytes.Contains(lower, []byte("multipart/related")) && !hasHeader(head, "to")) {
			return KindMHTML // a saved web page: no receiver, the page and its images
		}
		return KindEML
	}
	if ext == ".html" || ext == ".htm" {
		if bytes.Contains(lower, []byte("<")) {
			return KindHTML
		}
	}
	return ""
}

// looksJSONStart reports whether t starts like a JSON object or array ({" or [ followed by a
// value), not prose that opens with a bracket.
func looksJSONStart(t []byte) bool {
	u := bytes.TrimLeft(t[1:], " \t\r\n")
	if len(u) == 0 {
		return false
	}
	if t[0] == '{' {
		return u[0] == '"' || u[0] == '}'
	}
	return bytes.IndexByte([]byte("{[\"-0123456789tfn]"), u[0]) >= 0
}

// xmlRoot returns the lower-cased name of the first element of XML text (after the
// declaration, comments, processing instructions and a doctype), or "".
func xmlRoot(t []byte) string {
	for i := 0; i < 64; i++ {
		t = bytes.TrimLeft(t, " \t\r\n")
		switch {
		case bytes.HasPrefix(t, []byte("<?")):
			j := bytes.Index(t, []byte("?>"))
			if j < 0 {
				return ""
			}
			t = t[j+2:]
		case bytes.HasPrefix(t, []byte("<!--")):
			j := bytes.Index(t, []byte("-->"))
			if j < 0 {
				return ""
			}
			t = t[j+3:]
		case bytes.HasPrefix(t, []byte("<!")):
			j := bytes.IndexByte(t, '>')
			if j < 0 {
				return ""
			}
			t = t[j+1:]
		case bytes.HasPrefix(t, []byte("<")):
			end := bytes.IndexAny(t[1:], " \t\r\n/>")
			if end <= 0 {
				return ""
			}
			return string(t[1 : 1+end])
		default:
			return ""
		}
	}
	return ""
}

// looksMail reports whether text starts with an Internet mail header: a header line first, and
// at least two of From, To, Subject, Date, Message-ID, MIME-Version, Received before the first
// blank line.
func looksMail(head []byte) bool {
	first, _, _ := bytes.Cut(head, []byte("\n"))
	colon := bytes.IndexByte(first, ':')
	if colon <= 0 || bytes.ContainsAny(first[:colon], " \t") {
		return false
	}
	hdr, _, _ := bytes.Cut(bytes.ReplaceAll(head, []byte("\r\n"), []byte("\n")), []byte("\n\n"))
	n := 0
	for _, l := range bytes.Split(hdr, []byte("\n")) {
		k, _, ok := bytes.Cut(l, []byte(":"))
		if !ok {
			continue
		}
		switch strings.ToLower(string(k)) {
		case "from", "to", "subject", "date", "message-id", "mime-version", "received", "return-path":
			n++
		}
	}
	return n >= 2
}

// hasHeader reports whether the header block at the start of head has the field name.
func hasHeader(head []byte, name string) bool {
	hdr, _, _ := bytes.Cut(bytes.ReplaceAll(head, []byte("\r\n"), []byte("\n")), []byte("\n\n"))
	for _, l := range bytes.Split(hdr, []byte("\n")) {
		if k, _, ok := bytes.Cut(l, []byte(":")); ok && strings.EqualFold(string(k), name) {
			return true
		}
	}
	return false
}

// isMSG reports whether data is an OLE compound file holding an Outlook message: a property
// stream or __substg1.0_ streams at its root.
func isMSG(data []byte) bool {
	if !bytes.Contains(data, utf16("__substg1.0_")) {
		return false
	}
	c, err := openCFB(data)
	if err != nil {
		return bytes.Contains(data, utf16("__properties_version1.0"))
	}
	for _, k := range c.children(0) {
		if n := c.entries[k].Name; n == "__properties_version1.0" || strings.HasPrefix(n, "__substg1.0_") {
			return true
		}
	}
	return false
}
