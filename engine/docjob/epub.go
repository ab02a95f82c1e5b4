package docjob

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	"jobdesk/engine/job"
)

// readZipFile reads the entry called name from zr (ok false when there is none), never more than
// its declared size nor more than *budget bytes in all: an entry that expands beyond either is
// E003, an encrypted one E005 for kind.
func readZipFile(zr *zip.Reader, name string, kind Kind, budget *int64) (data []byte, ok bool, err error) {
	for _, f := range zr.File {
		if f.Name != name {
			continue
		}
		if f.Flags&1 != 0 {
			return nil, true, errPassword(kind)
		}
		size := int64(min(f.UncompressedSize64, 1<<62))
		if size > MaxFileSize || size > *budget {
			return nil, true, errTooLarge("the expanded "+kind.Label()+" file", "展開後の"+kind.LabelJa()+"ファイル", MaxTotalSize-*budget+size, MaxTotalSize)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, true, errDamaged(kind, err)
		}
		defer rc.Close()
		lr := &limitReader{r: rc, n: size}
		b, err := io.ReadAll(lr)
		*budget -= int64(len(b))
		if lr.over {
			return nil, true, errTooLarge("the expanded "+kind.Label()+" file", "展開後の"+kind.LabelJa()+"ファイル", MaxTotalSize+1, MaxTotalSize)
		}
		if err != nil {
			return nil, true, errDamaged(kind, err)
		}
		return b, true, nil
	}
	return nil, false, nil
}

// opf is the package document of an EPUB: its metadata, manifest and spine.
type opf struct {
	Metadata struct {
		Title       []string `xml:"title"`
		Creator     []string `xml:"creator"`
		Description []string `xml:"description"`
		Publisher   []string `xml:"publisher"`
		Date        []string `xml:"date"`
		Language    []string `xml:"language"`
	} `xml:"metadata"`
	Manifest []struct {
		ID   string `xml:"id,attr"`
		Href string `xml:"href,attr"`
		Type string `xml:"media-type,attr"`
	} `xml:"manifest>item"`
	Spine []struct {
		IDRef  string `xml:"idref,attr"`
		Linear string `xml:"linear,attr"`
	} `xml:"spine>itemref"`
}

// convertEPUB renders an EPUB book: its title, authors and description, then every chapter of
// the spine in reading order through the HTML path. Chapters that cannot be read are listed as
// failed children (the book is then partial); a book with DRM-encrypted chapters is E005.
func convertEPUB(ctx context.Context, data []byte) (*Doc, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, errDamaged(KindEPUB, err)
	}
	budget := int64(MaxTotalSize)
	container, ok, err := readZipFile(zr, "META-INF/container.xml", KindEPUB, &budget)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errDamaged(KindEPUB, reason("the book has no META-INF/container.xml"))
	}
	var ct struct {
		Rootfiles []struct {
			Path string `xml:"full-path,attr"`
		} `xml:"rootfiles>rootfile"`
	}
	if err := xmlDecoder(container).Decode(&ct); err != nil || len(ct.Rootfiles) == 0 {
		return nil, errDamaged(KindEPUB, reason("the book's container.xml names no package document"))
	}
	opfPath := ct.Rootfiles[0].Path
	raw, ok, err := readZipFile(zr, opfPath, KindEPUB, &budget)
	if err != nil {
		return nil, err
	}
	var pkg opf
	if !ok || xmlDecoder(raw).Decode(&pkg) != nil {
		return nil, errDamaged(KindEPUB, reason("the book's package document "+opfPath+" cannot be read"))
	}
	if enc, ok, _ := readZipFile(zr, "META-INF/encryption.xml", KindEPUB, &budget); ok && bytes.Contains(enc, []byte("EncryptedData")) {
		return nil, errPassword(KindEPUB)
	}
	var head, b strings.Builder
	m := pkg.Metadata
	meta := []struct{ label, value string }{
		{"Title", strings.Join(m.Title, ", ")}, {"Authors", strings.Join(m.Creator, ", ")},
		{"Language", strings.Join(m.Language, ", ")}, {"Publisher", strings.Join(m.Publisher, ", ")},
		{"Date", strings.Join(m.Date, ", ")}, {"Description", strings.Join(m.Description, " ")},
	}
	for _, x := range meta {
		if v := oneLine(x.value); v != "" {
			if x.label == "Description" {
				v = oneLine(feedText(v))
			} else {
				v = escapeInline(v)
			}
			fmt.Fprintf(&head, "**%s:** %s  \n", x.label, v)
		}
	}
	items := map[string]string{}
	for _, it := range pkg.Manifest {
		items[it.ID] = it.Href
	}
	d := &Doc{Kind: KindEPUB, Method: MethodNative}
	base := path.Dir(opfPath)
	for _, ref := range pkg.Spine {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		href, ok := items[ref.IDRef]
		if !ok {
			continue
		}
		if u, err := url.PathUnescape(href); err == nil {
			href = u
		}
		href, _, _ = strings.Cut(href, "#")
		name := path.Clean(path.Join(base, href))
		if base == "." {
			name = path.Clean(href)
		}
		child := Child{Name: name, Kind: KindHTML}
		body, ok, err := readZipFile(zr, name, KindEPUB, &budget)
		switch {
		case err != nil:
			je := job.AsError(err)
			child.Status, child.Code, child.Reason, child.ReasonJa = StatusFailed, string(je.Code), je.Message, je.MessageJa
		case !ok:
			child.Status, child.Code, child.Reason, child.ReasonJa = StatusFailed, "E004", "the chapter is missing from the book", "章のファイルが見つかりません"
		default:
			s, _, _ := decodeHTML(body)
			md := htmlMarkdown(s, false)
			b.WriteString(md)
			b.WriteString("\n")
			d.Pages++
			child.Status, child.Chars = StatusReady, utf8.RuneCountInString(md)
		}
		d.Children = append(d.Children, child)
	}
	if d.Pages == 0 {
		return nil, errDamaged(KindEPUB, reason("no chapter of the book could be read"))
	}
	for _, c := range d.Children {
		if c.Status != StatusReady {
			d.Method = MethodPartial
		}
	}
	d.Markdown = tidyMarkdown(b.String())
	if head.Len() > 0 {
		d.Markdown = head.String() + "\n" + d.Markdown
	}
	return d, nil
}
