package ui

import (
	"image/color"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/engine/job"
)

// statusColors gives each status its badge colour: grey waits, blue runs, amber retries or is
// partial, green succeeded, red failed or timed out, slate was cancelled. Every colour keeps
// white text readable (contrast ≥ 4.5:1).
var statusColors = map[job.Status]color.NRGBA{
	job.Pending:   {0x60, 0x6B, 0x7A, 0xFF},
	job.Running:   {0x1F, 0x5F, 0xD1, 0xFF},
	job.Retrying:  {0xA8, 0x5A, 0x00, 0xFF},
	job.Succeeded: {0x1B, 0x7F, 0x3B, 0xFF},
	job.Partial:   {0x8A, 0x6A, 0x00, 0xFF},
	job.Failed:    {0xC6, 0x28, 0x28, 0xFF},
	job.TimedOut:  {0x9C, 0x1C, 0x4F, 0xFF},
	job.Cancelled: {0x45, 0x4F, 0x5C, 0xFF},
}

// statusColor returns the badge colour of s (grey for an unknown status).
func statusColor(s job.Status) color.Color {
	if c, ok := statusColors[s]; ok {
		return c
	}
	return statusColors[job.Pending]
}

// typeColor is the quiet background of the job-type label.
var typeColor = color.NRGBA{0x2E, 0x6B, 0xE6, 0x26}

// badge is a rounded, coloured label of fixed width: the status and type tags of a row.
type badge struct {
	rect  *canvas.Rectangle
	text  *canvas.Text
	box   *fyne.Container
	light bool // white text on a strong colour; else the theme's text colour on a tint
}

// newBadge makes a badge width wide; light selects white text on a strong colour.
func newBadge(width float32, light bool) *badge {
	b := &badge{rect: canvas.NewRectangle(color.Transparent), text: canvas.NewText("", color.White), light: light}
	b.rect.CornerRadius = 6
	b.text.Alignment = fyne.TextAlignCenter
	b.text.TextSize = theme.CaptionTextSize() + 1
	b.text.TextStyle = fyne.TextStyle{Bold: light}
	if !light {
		b.text.Color = theme.Color(theme.ColorNameForeground)
	}
	inner := container.New(&fixedSize{width: width, height: b.text.MinSize().Height + 8}, container.NewStack(b.rect, b.text))
	b.box = container.NewCenter(inner)
	return b
}

// set changes the badge's words and colour, refreshing only what changed.
func (b *badge) set(text string, fill color.Color) {
	fg := color.Color(color.White)
	if !b.light {
		fg = theme.Color(theme.ColorNameForeground) // the theme's now: it may have changed since
	}
	if b.text.Text != text || b.text.Color != fg {
		b.text.Text, b.text.Color = text, fg
		b.text.Refresh()
	}
	if b.rect.FillColor != fill {
		b.rect.FillColor = fill
		b.rect.Refresh()
	}
}

// hintText is secondary text (a tagline, a hint, a field's name) in the theme's placeholder
// colour, which stays readable on the light and the dark theme alike; a low-importance label
// uses the disabled colour, which on the dark theme is barely distinguishable from the
// background.
func hintText(text string, size fyne.ThemeSizeName, wrap fyne.TextWrap, align fyne.TextAlign) *widget.RichText {
	rt := widget.NewRichText(&widget.TextSegment{Text: text, Style: widget.RichTextStyle{
		Alignment: align, ColorName: theme.ColorNamePlaceHolder, SizeName: size}})
	rt.Wrapping = wrap
	return rt
}

// wrapFor is how text s wraps: Japanese (any kana or kanji in it) may break between any two
// characters, as Japanese is written; other text breaks between words. Fyne's word wrapping
// breaks only at spaces, which in a Japanese sentence fall beside numbers and Latin words and
// leave ragged lines.
func wrapFor(s string) fyne.TextWrap {
	for _, r := range s {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) {
			return fyne.TextWrapBreak
		}
	}
	return fyne.TextWrapWord
}

// fixedSize is a layout that gives its objects a fixed width (and, when set, height), so the
// badges and progress bars of every row line up in columns whatever their text.
type fixedSize struct{ width, height float32 }

// MinSize is the fixed width and the tallest object's height (or the fixed height).
func (l *fixedSize) MinSize(objects []fyne.CanvasObject) fyne.Size {
	h := l.height
	if h == 0 {
		for _, o := range objects {
			h = max(h, o.MinSize().Height)
		}
	}
	return fyne.NewSize(l.width, h)
}

// Layout stretches every object over the whole area.
func (l *fixedSize) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objects {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(size)
	}
}

// newFocusRing is the outline that marks what has the keyboard focus: the theme's primary colour,
// two pixels wide, which stands out on the light and the dark theme alike (the toolkit's own
// focus colour is a pale tint of it). Hidden until shown.
func newFocusRing() *canvas.Rectangle {
	r := canvas.NewRectangle(color.Transparent)
	r.StrokeColor = theme.Color(theme.ColorNamePrimary)
	r.StrokeWidth = 2
	r.CornerRadius = 4
	r.Hide()
	return r
}

// newSelect is a drop-down whose prompt, while nothing is chosen, is in the window's language
// (the toolkit's own reads "(Select one)").
func newSelect(tr *translator, options []string, changed func(string)) *widget.Select {
	s := widget.NewSelect(options, changed)
	s.PlaceHolder = tr.T("select.none")
	return s
}
