package docjob

import (
	"archive/zip"
	"bytes"
	"path"
	"strings"
)

// Kind is a file's type as Detect sees it from its content.
type Kind string

// Kinds JobDesk recognises. Only some are converted; the rest fail with E004 naming the type.
const (
	KindPDF     Kind = "pdf"
	KindDOCX    Kind = "docx"
	KindXLSX    Kind = "xlsx"
	KindZIP     Kind = "zip"
	KindCSV     Kind = "csv"
	KindText    Kind = "txt"
	KindOffice  Kind = "office-encrypted" // an encrypted OOXML package whose inner type is unknown
	KindPPTX    Kind = "pptx"
	KindODF     Kind = "odf"
	KindDOC     Kind = "doc"
	KindXLS     Kind = "xls"
	KindOLE     Kind = "ole"
	KindImage   Kind = "image"
	KindRTF     Kind = "rtf"
	KindUnknown Kind = "unknown"
)

var kindLabels = map[Kind]string{
	KindPDF: "PDF", KindDOCX: "Word (DOCX)", KindXLSX: "Excel (XLSX)", KindZIP: "ZIP", KindCSV: "CSV",
	KindText: "text", KindOffice: "encrypted Office", KindPPTX: "PowerPoint (PPTX)",
	KindODF: "OpenDocument", KindDOC: "Word 97-2003 (.doc)", KindXLS: "Excel 97-2003 (.xls)",
	KindOLE: "OLE compound document", KindImage: "image", KindRTF: "RTF", KindUnknown: "unknown binary",
}

var kindLabelsJa = map[Kind]string{
	KindPDF: "PDF", KindDOCX: "Word（DOCX）", KindXLSX: "Excel（XLSX）", KindZIP: "ZIP", KindCSV: "CSV",
	KindText: "テキスト", KindOffice: "暗号化されたOffice", KindPPTX: "PowerPoint（PPTX）",
	KindODF: "OpenDocument", KindDOC: "Word 97-2003（.doc）", KindXLS: "Excel 97-2003（.xls）",
	KindOLE: "OLE複合ドキュメント", KindImage: "画像", KindRTF: "RTF", KindUnknown: "不明なバイナリ",
}

// LabelJa is the kind's name in Japanese messages ("Word（DOCX）", "画像", …).
func (k Kind) LabelJa() string {
	if l, ok := kindLabelsJa[k]; ok {
		return l
	}
	return string(k)
}

// Label is the kind's name for people ("Word (DOCX)", "Excel 97-2003 (.xls)", …).
func (k Kind) Label() string {
	if l, ok := kindLabels[k]; ok {
		return l
	}
	return string(k)
}

// Supported reports whether JobDesk converts this kind.
func (k Kind) Supported() bool {
	switch k {
	case KindPDF, KindDOCX, KindXLSX, KindZIP, KindCSV, KindText, KindOffice, KindPPTX, KindXLS:
		return true
	}
	return moreSupported[k]
}

var oleMagic = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}

// utf16 returns s as UTF-16LE bytes, the way OLE directory entries store stream names.
func utf16(s string) []byte {
	b := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		b = append(b, s[i], 0)
	}
	return b
}

var (
	oleEncryptionInfo = utf16("EncryptionInfo")
	oleWordDocument   = utf16("WordDocument")
	oleWorkbook       = utf16("Workbook")
	oleBook           = utf16("Book")
)

// isEncryptedOLE reports whether data is an OLE container holding an encrypted OOXML package
// (what Word and Excel write when a file has an opening password).
func isEncryptedOLE(data []byte) bool {
	return bytes.HasPrefix(data, oleMagic) && bytes.Contains(data, oleEncryptionInfo)
}

// Detect returns the kind of data from its content; name (the file name, may be empty) only
// breaks ties: a text file is CSV when its name ends in .csv/.tsv or its lines agree on a
// delimiter, and an encrypted Office container is DOCX or XLSX by its extension.
func Detect(data []byte, name string) Kind {
	ext := strings.ToLower(path.Ext(strings.ReplaceAll(name, "\\", "/")))
	head := data
	if len(head) > 1024 {
		head = head[:1024]
	}
	switch {
	case bytes.HasPrefix(data, []byte("%PDF-")):
		return KindPDF
	case bytes.HasPrefix(data, []byte("PK\x03\x04")), bytes.HasPrefix(data, []byte("PK\x05\x06")),
		bytes.HasPrefix(data, []byte("PK\x07\x08")):
		return detectZip(data, ext)
	case bytes.HasPrefix(data, oleMagic):
		switch {
		case isMSG(data):
			return KindMSG
		case bytes.Contains(data, oleEncryptionInfo):
			if k := ooxmlByName(ext); k != "" {
				return k
			}
			return KindOffice
		case bytes.Contains(data, oleWordDocument):
			return KindDOC
		case bytes.Contains(data, oleWorkbook), bytes.Contains(data, oleBook):
			return KindXLS
		}
		return KindOLE
	case bytes.HasPrefix(data, []byte("\x89PNG")), bytes.HasPrefix(data, []byte{0xFF, 0xD8, 0xFF}),
		bytes.HasPrefix(data, []byte("GIF8")), bytes.HasPrefix(data, []byte("II*\x00")),
		bytes.HasPrefix(data, []byte("MM\x00*")):
		return KindImage
	case bytes.HasPrefix(data, []byte("{\\rtf")):
		return KindRTF
	case bytes.Contains(head, []byte("%PDF-")):
		return KindPDF // some producers put junk before the header
	}
	if k := sniffText(head, ext); looksMail(head) && (k == KindEML || k == KindMHTML) {
		return k // a mail or saved page may carry 8-bit binary parts
	}
	if !looksText(data) {
		return KindUnknown
	}
	if k := sniffText(data, ext); k != "" {
		return k
	}
	if ext == ".csv" || ext == ".tsv" {
		return KindCSV
	}
	if ext == "" || ext == ".txt" || ext == ".text" || ext == ".md" || ext == ".log" {
		if ext == "" && looksDelimited(data) {
			return KindCSV
		}
		return KindText
	}
	if looksDelimited(data) {
		return KindCSV
	}
	return KindText
}

// ooxmlByName is the Office Open XML kind a file's extension (ext) claims, "" for another:
// the kind of a package its bytes cannot tell (encrypted, or too damaged to open).
func ooxmlByName(ext string) Kind {
	switch ext {
	case ".docx", ".docm":
		return KindDOCX
	case ".xlsx", ".xlsm":
		return KindXLSX
	case ".pptx", ".pptm":
		return KindPPTX
	}
	return ""
}

// detectZip looks inside an archive to tell OOXML and OpenDocument packages from plain ZIPs.
// A package too damaged to open keeps the kind its extension names, so the error says "damaged
// Word file" rather than "damaged ZIP".
func detectZip(data []byte, ext string) Kind {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if zr == nil {
		_ = err
		if k := ooxmlByName(ext); k != "" {
			return k
		}
		return KindZIP
	}
	var ct, word, xl, ppt, odf bool
	for _, f := range zr.File {
		switch {
		case f.Name == "[Content_Types].xml":
			ct = true
		case strings.HasPrefix(f.Name, "word/"):
			word = true
		case strings.HasPrefix(f.Name, "xl/"):
			xl = true
		case strings.HasPrefix(f.Name, "ppt/"):
			ppt = true
		case f.Name == "mimetype" || f.Name == "content.xml":
			odf = true
		}
	}
	switch {
	case ct && word:
		return KindDOCX
	case ct && xl:
		return KindXLSX
	case ct && ppt:
		return KindPPTX
	case odf && !ct:
		if mt := zr.File[0]; mt.Name == "mimetype" && mt.UncompressedSize64 < 200 {
			if rc, err := mt.Open(); err == nil {
				var b [200]byte
				n, _ := rc.Read(b[:])
				rc.Close()
				if bytes.HasPrefix(b[:n], []byte("application/vnd.oasis.opendocument")) {
					return KindODF
				}
				if bytes.HasPrefix(b[:n], []byte("application/epub+zip")) {
					return KindEPUB
				}
			}
		}
	}
	return KindZIP
}

// looksText reports whether the first 8 KB hold no NUL bytes (or carry a UTF-16 BOM) and few
// control characters.
func looksText(data []byte) bool {
	if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
		return true
	}
	head := data
	if len(head) > 8192 {
		head = head[:8192]
	}
	ctl := 0
	for _, c := range head {
		switch {
		case c == 0:
			return false
		case c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != 0x1A && c != 0x0C:
			ctl++
		}
	}
	return ctl*100 <= len(head)
}

// looksDelimited reports whether the first lines agree on a comma or tab count of at least one.
func looksDelimited(data []byte) bool {
	head := data
	if len(head) > 8192 {
		head = head[:8192]
	}
	lines := bytes.Split(bytes.TrimRight(head, "\r\n"), []byte("\n"))
	if len(lines) > 1 && len(head) == 8192 {
		lines = lines[:len(lines)-1]
	}
	if len(lines) < 2 {
		return false
	}
	for _, d := range []byte{',', '\t'} {
		n := bytes.Count(lines[0], []byte{d})
		if n == 0 {
			continue
		}
		agree := 0
		for _, l := range lines {
			if bytes.Count(l, []byte{d}) == n {
				agree++
			}
		}
		if agree*100 >= len(lines)*90 {
			return true
		}
	}
	return false
}
