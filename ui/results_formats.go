package ui

import (
	"regexp"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
)

// This file shows, above a converted document, what a user of its format looks for first: a
// deck's slides with their titles, a workbook's sheets (hidden ones marked), a mail's header
// and attachments, a book's chapters, and in words what a web page, data file, notebook, feed
// or picture became. Each title jumps to its part of the document. It reads only what the
// conversion reported (the format, its count of slides, sheets or chapters, a mail's header)
// and the Markdown's headings.

// docOutlineItem is one slide, sheet or chapter: its words and the document section it opens.
type docOutlineItem struct {
	text    string
	section int
}

// slideHeading is a slide's section title as app.MarkdownSections gives it from a deck's slide
// marker, or from the "## Slide 3: 売上 (hidden)" headings of decks converted before the markers.
var slideHeading = regexp.MustCompile(`^Slide (\d+)(?:: (.*?))?( \(hidden\))?$`)

// formatView is the view of the converted file's own format, or nil for a format the document
// view shows as it is (PDF, Word, text, CSV, ZIP).
func (v *docView) formatView() fyne.CanvasObject {
	tr, d := v.rv.host.tr(), v.doc
	switch d.Kind {
	case "pptx":
		var items []docOutlineItem
		for i, s := range d.Sections {
			if s.Level == 2 && slideHeading.MatchString(s.Title) {
				items = append(items, docOutlineItem{sectionWords(tr, d.Kind, s.Title), i})
			}
		}
		return v.outline(tr.T("doc.slides", countOr(d.Pages, len(items))), theme.MediaPhotoIcon(), items)
	case "xls", "xlsx":
		var items []docOutlineItem
		for i, s := range d.Sections {
			if s.Level != 2 {
				continue
			}
			items = append(items, docOutlineItem{sectionWords(tr, d.Kind, s.Title), i})
		}
		return v.outline(tr.T("doc.sheets", countOr(d.Pages, len(items))), theme.GridIcon(), items)
	case "epub":
		var items []docOutlineItem
		for _, level := range []int{1, 2} { // the chapters' own headings; else their sections'
			for i, s := range d.Sections {
				if s.Level == level {
					items = append(items, docOutlineItem{s.Title, i})
				}
			}
			if len(items) > 0 {
				break
			}
		}
		return v.outline(tr.T("doc.chapters", countOr(d.Pages, len(items))), theme.DocumentIcon(), items)
	case "eml", "msg":
		return v.mailHeader()
	case "image":
		return v.picture()
	}
	if !tr.Has("doc.kind." + d.Kind) {
		return nil
	}
	l := widget.NewLabel(tr.T("doc.kind." + d.Kind))
	l.TextStyle.Bold = true
	l.Wrapping = wrapFor(l.Text)
	return l
}

// sectionWords is a section's heading in the window's language where the converter wrote it in
// words of its own: a deck's "Slide 3: 計画 (hidden)" reads スライド 3：計画（非表示）, a
// workbook's hidden sheet is marked in the window's words; other headings are the document's.
func sectionWords(tr *translator, kind, title string) string {
	switch kind {
	case "pptx":
		m := slideHeading.FindStringSubmatch(title)
		if m == nil {
			return title
		}
		n, _ := strconv.Atoi(m[1])
		text := tr.T("doc.slide.untitled", n)
		if m[2] != "" {
			text = tr.T("doc.slide", n, m[2])
		}
		if m[3] != "" {
			text += tr.T("doc.hidden")
		}
		return text
	case "xls", "xlsx":
		if name, hidden := strings.CutSuffix(title, " (hidden)"); hidden {
			return name + tr.T("doc.hidden")
		}
	}
	return title
}

// countOr is n, or counted when the conversion reported no count.
func countOr(n, counted int) int {
	if n > 0 {
		return n
	}
	return counted
}

// maxOutlineRows is how many slides, sheets or chapters show before the list scrolls.
const maxOutlineRows = 8

// outline is a bold title and the items under it, each with a button that shows its part.
func (v *docView) outline(title string, icon fyne.Resource, items []docOutlineItem) fyne.CanvasObject {
	tr := v.rv.host.tr()
	head := widget.NewLabel(title)
	head.TextStyle.Bold = true
	rows := container.NewVBox()
	for _, it := range items {
		idx := it.section
		label := widget.NewLabel(it.text)
		label.Truncation = fyne.TextTruncateEllipsis
		open := widget.NewButtonWithIcon(tr.T("doc.open_entry"), theme.VisibilityIcon(), func() { v.show(idx) })
		open.Importance = widget.LowImportance
		rows.Add(container.NewBorder(nil, nil, widget.NewIcon(icon), open, v.rv.host.hoverText(label, it.text)))
	}
	if len(items) == 0 {
		return head
	}
	var list fyne.CanvasObject = rows
	if len(items) > maxOutlineRows {
		h := rows.MinSize().Height / float32(len(items)) * (maxOutlineRows + 0.5)
		list = tallBox(container.NewVScroll(rows), h)
	}
	return container.NewVBox(head, list)
}

// mailHeader is a mail's From, To, Cc, Date and Subject as a form; the attachments follow in
// the entry list.
func (v *docView) mailHeader() fyne.CanvasObject {
	tr, m := v.rv.host.tr(), v.doc.Mail
	head := widget.NewLabel(tr.T("doc.kind." + v.doc.Kind))
	head.TextStyle.Bold = true
	if m == nil {
		return head
	}
	var cells []fyne.CanvasObject
	for _, f := range []struct{ key, value string }{
		{"mail.from", m.From}, {"mail.to", m.To}, {"mail.cc", m.Cc}, {"mail.date", m.Date}, {"mail.subject", m.Subject},
	} {
		if f.value == "" {
			continue
		}
		label := widget.NewLabel(tr.T(f.key))
		label.TextStyle.Bold = true
		value := widget.NewLabel(f.value)
		value.Wrapping = fyne.TextWrapWord
		value.Selectable = true
		cells = append(cells, label, value)
	}
	return container.NewVBox(head, container.New(layout.NewFormLayout(), cells...))
}

// entriesTitle is the title of the entry list: a ZIP's files, a mail's attachments, a book's
// chapter files.
func entriesTitle(tr *translator, kind string, n int) string {
	if tr.Has("doc.entries." + kind) {
		return tr.T("doc.entries."+kind, n)
	}
	return tr.T("doc.entries", n)
}

// chaptersAllRead reports a book whose every chapter file converted: its chapter list says all,
// and the files behind it are shown only when one was not read.
func chaptersAllRead(d app.DocumentView) bool {
	if d.Kind != "epub" {
		return false
	}
	for _, e := range d.Entries {
		if e.Status != "ready" {
			return false
		}
	}
	return true
}

// pictureHeight is the height of a converted picture shown above its text.
const pictureHeight = 220

// picture is a converted picture itself, above the text read from it, when the file is still
// on this machine; else the words of its kind.
func (v *docView) picture() fyne.CanvasObject {
	tr := v.rv.host.tr()
	head := widget.NewLabel(tr.T("doc.kind.image"))
	head.TextStyle.Bold = true
	if v.doc.Source == "" {
		return head
	}
	img := canvas.NewImageFromFile(v.doc.Source)
	img.FillMode = canvas.ImageFillContain
	img.ScaleMode = canvas.ImageScaleSmooth
	return container.NewVBox(head, tallBox(img, pictureHeight))
}
