package ui

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
	"jobdesk/engine/job"
	"jobdesk/engine/mdtext"
)

// maxRenderedBytes bounds the Markdown drawn at once: a longer section shows its beginning and
// says so (the whole file can be saved); rich text of megabytes would freeze the window.
const maxRenderedBytes = 40 << 10

// docView shows a converted document: the Markdown rendered or raw, a choice of its sections
// (a PDF's pages, a workbook's sheets, a ZIP's files), copy to the clipboard, a ZIP's files with
// how each converted, and which pages a partial result left out and why.
type docView struct {
	rv      *resultViews
	doc     app.DocumentView
	root    *fyne.Container
	body    *fyne.Container
	scroll  *container.Scroll
	raw     bool
	section int // index into doc.Sections; -1: the whole document
	pick    *widget.Select
	choices []string
}

func newDocView(rv *resultViews, j job.Job, doc app.DocumentView) *docView {
	v := &docView{rv: rv, doc: doc, section: -1}
	tr := rv.host.tr()
	v.body = container.NewVBox()
	v.scroll = container.NewVScroll(v.body)

	mode := widget.NewRadioGroup([]string{tr.T("doc.rendered"), tr.T("doc.raw")}, nil)
	mode.Horizontal = true
	mode.SetSelected(tr.T("doc.rendered"))
	mode.OnChanged = func(s string) {
		v.raw = s == tr.T("doc.raw")
		v.render()
	}
	copyBtn := widget.NewButtonWithIcon(tr.T("doc.copy"), theme.ContentCopyIcon(), func() {
		rv.host.desktop.Clipboard().SetContent(v.text())
		rv.host.setStatus(tr.T("status.copied"))
	})
	tools := container.NewHBox(mode, copyBtn)
	if len(doc.Sections) > 1 {
		v.choices = []string{tr.T("doc.whole")}
		for _, s := range doc.Sections {
			title := sectionWords(tr, doc.Kind, s.Title)
			if s.Page > 0 {
				title = tr.T("doc.page", s.Page)
			}
			if s.Level == 2 {
				title = "    " + title
			}
			v.choices = append(v.choices, title)
		}
		v.pick = newSelect(v.rv.host.tr(), v.choices, func(s string) {
			for i, c := range v.choices {
				if c == s {
					v.section = i - 1
					break
				}
			}
			v.render()
		})
		v.pick.PlaceHolder = tr.T("doc.sections")
		if tr.Has("doc.sections." + doc.Kind) {
			v.pick.PlaceHolder = tr.T("doc.sections." + doc.Kind) // a deck's slides, a book's chapters
		}
		if len(doc.Markdown) > maxRenderedBytes {
			v.section = 0 // a long document opens at its first section
		}
	}
	parts := []fyne.CanvasObject{}
	if f := v.formatView(); f != nil {
		parts = append(parts, f)
	}
	if note := v.partialNote(); note != nil {
		parts = append(parts, note)
	}
	if len(doc.Entries) > 0 && !chaptersAllRead(doc) {
		parts = append(parts, v.entryList())
	}
	head := fyne.CanvasObject(tools)
	if v.pick != nil {
		head = container.NewVBox(v.pick, tools)
	}
	parts = append(parts, head, tallBox(v.scroll, 420))
	v.root = container.NewVBox(parts...)
	v.render()
	if v.pick != nil {
		v.pick.SetSelectedIndex(v.section + 1)
	}
	return v
}

// text is the Markdown on show: the chosen section, or the whole document.
func (v *docView) text() string {
	md := v.doc.Markdown
	if v.section >= 0 && v.section < len(v.doc.Sections) {
		s := v.doc.Sections[v.section]
		md = md[s.Start:s.End]
	}
	return md
}

// render draws the chosen part, rendered or raw.
func (v *docView) render() {
	md := v.text()
	cut := false
	if len(md) > maxRenderedBytes {
		md, cut = strings.ToValidUTF8(md[:maxRenderedBytes], ""), true
	}
	var o fyne.CanvasObject
	if v.raw {
		l := widget.NewLabel(md)
		l.TextStyle.Monospace = true
		l.Selectable = true
		l.Wrapping = fyne.TextWrapBreak
		o = l
	} else {
		dir := ""
		if v.doc.File != "" {
			dir = filepath.Dir(v.doc.File)
		}
		o = markdownView(pictureLinks(pageLabels(slideBreaks(md), v.rv.host.tr()), dir))
	}
	v.body.Objects = []fyne.CanvasObject{o}
	if cut {
		l := widget.NewLabel(v.rv.host.tr().T("doc.cut"))
		l.Importance = widget.WarningImportance
		l.Wrapping = wrapFor(l.Text)
		v.body.Objects = append(v.body.Objects, l)
	}
	v.body.Refresh()
	v.scroll.ScrollToTop()
}

// slideBreaks draws a rule where each slide after the first begins, so that a deck read whole
// shows where its slides part, untitled ones too (the markers themselves are comments, not
// shown). Markers in code blocks stay as written.
func slideBreaks(md string) string {
	if !strings.Contains(md, "<!-- Slide ") {
		return md
	}
	lines := strings.Split(md, "\n")
	fenced, first := false, true
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "```"):
			fenced = !fenced
		case !fenced && mdtext.SlideMarker.MatchString(strings.TrimRight(l, "\r")):
			if first {
				first = false
				continue
			}
			lines[i] = "\n---\n" // a thematic break, apart from what comes before
		}
	}
	return strings.Join(lines, "\n")
}

// pageLabels shows where each page of a PDF begins, in the reader's language: a rule between
// pages and the page's number in small type ("2 ページ目" / "Page 2"). Markers in code blocks
// stay as written.
func pageLabels(md string, tr *translator) string {
	if !strings.Contains(md, "<!-- Page ") {
		return md
	}
	lines := strings.Split(md, "\n")
	fenced, first := false, true
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
			continue
		}
		m := mdtext.PageMarker.FindStringSubmatch(strings.TrimRight(l, "\r"))
		if fenced || m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		lines[i] = "*" + tr.T("doc.page", n) + "*"
		if !first {
			lines[i] = "\n---\n\n" + lines[i]
		}
		first = false
	}
	return strings.Join(lines, "\n")
}

// show moves to section i (from a ZIP's file list).
func (v *docView) show(i int) {
	if v.pick != nil && i >= 0 && i+1 < len(v.choices) {
		v.pick.SetSelectedIndex(i + 1) // calls render
		return
	}
	v.section = i
	v.render()
}

// partialNote says which pages a partial result left out and why; nil when nothing was.
func (v *docView) partialNote() fyne.CanvasObject {
	tr, d := v.rv.host.tr(), v.doc
	var lines []string
	if d.Reason != "" || d.ReasonJa != "" {
		r := d.Reason
		if tr.lang == LangJa && d.ReasonJa != "" || r == "" {
			r = d.ReasonJa
		}
		lines = append(lines, r)
	}
	if len(d.NoTextPages) > 0 {
		lines = append(lines, tr.T("doc.no_text_pages", pageList(d.NoTextPages)))
	}
	if len(d.DamagedPages) > 0 {
		lines = append(lines, tr.T("doc.damaged_pages", pageList(d.DamagedPages)))
	}
	if len(d.OCRPages) > 0 {
		lines = append(lines, tr.T("doc.ocr_pages", pageList(d.OCRPages)))
	}
	if len(lines) == 0 {
		return nil
	}
	box := container.NewVBox()
	for _, s := range lines {
		l := widget.NewLabel(s)
		l.Importance = widget.WarningImportance
		l.Wrapping = wrapFor(s)
		box.Add(l)
	}
	return box
}

// pageList writes page numbers for people: "3, 5, 7–9".
func pageList(pages []int) string {
	var parts []string
	for i := 0; i < len(pages); {
		k := i
		for k+1 < len(pages) && pages[k+1] == pages[k]+1 {
			k++
		}
		if k-i >= 2 {
			parts = append(parts, fmt.Sprintf("%d–%d", pages[i], pages[k]))
		} else {
			for n := i; n <= k; n++ {
				parts = append(parts, fmt.Sprint(pages[n]))
			}
		}
		i = k + 1
	}
	return strings.Join(parts, ", ")
}

// entryList lists a ZIP's files: status, name, kind, characters and why one failed, with a
// button that shows a converted file's part of the document.
func (v *docView) entryList() fyne.CanvasObject {
	tr := v.rv.host.tr()
	title := widget.NewLabel(entriesTitle(tr, v.doc.Kind, len(v.doc.Entries)))
	title.TextStyle.Bold = true
	box := container.NewVBox(title)
	for _, e := range v.doc.Entries {
		e := e
		icon := theme.ConfirmIcon()
		switch e.Status {
		case "partial":
			icon = theme.WarningIcon()
		case "failed":
			icon = theme.ErrorIcon()
		}
		status := tr.T("doc.entry." + e.Status)
		line := fmt.Sprintf("%s  ·  %s", e.Name, status)
		if e.Chars > 0 {
			line += "  ·  " + tr.T("result.chars", groupInt(int64(e.Chars)))
		}
		reason := e.Reason
		if tr.lang == LangJa && e.ReasonJa != "" || reason == "" {
			reason = e.ReasonJa
		}
		if reason != "" {
			line += "  ·  " + strings.TrimSpace(e.Code+" "+reason)
		}
		label := widget.NewLabel(line)
		label.Truncation = fyne.TextTruncateEllipsis
		row := container.NewBorder(nil, nil, widget.NewIcon(icon), nil, v.rv.host.hoverText(label, line))
		if e.Section >= 0 {
			idx := e.Section
			open := widget.NewButtonWithIcon(tr.T("doc.open_entry"), theme.VisibilityIcon(), func() { v.show(idx) })
			open.Importance = widget.LowImportance
			row = container.NewBorder(nil, nil, widget.NewIcon(icon), open, v.rv.host.hoverText(label, line))
		}
		box.Add(row)
	}
	return box
}
