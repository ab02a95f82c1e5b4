package ui

import (
	"image/color"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// TestTextContrast measures, on the light and the dark theme, every text colour on what lies
// under it — plain, hint, error, success, warning and primary text on the background and on the
// input and header backgrounds; the text of danger, success, warning and primary buttons; the
// status badges' white on their colours; the job-type badge's text on its tint — and fails below
// WCAG AA's 4.5:1.
func TestTextContrast(t *testing.T) {
	for _, v := range []fyne.ThemeVariant{theme.VariantLight, theme.VariantDark} {
		th := contrastTheme{Theme: theme.DefaultTheme(), variant: v, forced: true}
		c := func(n fyne.ThemeColorName) color.Color { return th.Color(n, v) }
		bg := c(theme.ColorNameBackground)
		type pair struct {
			what     string
			text, bg color.Color
			under    color.Color
		}
		pairs := []pair{}
		for _, b := range []fyne.ThemeColorName{theme.ColorNameBackground, theme.ColorNameInputBackground, theme.ColorNameHeaderBackground} {
			for _, f := range []fyne.ThemeColorName{theme.ColorNameForeground, theme.ColorNamePlaceHolder, theme.ColorNameError,
				theme.ColorNameSuccess, theme.ColorNameWarning, theme.ColorNamePrimary, theme.ColorNameHyperlink} {
				pairs = append(pairs, pair{string(f) + " on " + string(b), c(f), c(b), bg})
			}
		}
		for f, b := range map[fyne.ThemeColorName]fyne.ThemeColorName{
			theme.ColorNameForegroundOnError: theme.ColorNameError, theme.ColorNameForegroundOnSuccess: theme.ColorNameSuccess,
			theme.ColorNameForegroundOnWarning: theme.ColorNameWarning, theme.ColorNameForegroundOnPrimary: theme.ColorNamePrimary,
		} {
			pairs = append(pairs, pair{string(f) + " on " + string(b), c(f), c(b), bg})
		}
		for s, col := range statusColors {
			pairs = append(pairs, pair{"badge " + string(s), color.White, col, bg})
		}
		pairs = append(pairs, pair{"job-type badge", c(theme.ColorNameForeground), typeColor, bg})
		for _, p := range pairs {
			if r := contrast(p.text, p.bg, p.under); r < 4.5 {
				t.Errorf("%s theme: %s: contrast %.2f:1, below 4.5:1", variantName(v), p.what, r)
			}
		}
	}
}

func variantName(v fyne.ThemeVariant) string {
	if v == theme.VariantDark {
		return "dark"
	}
	return "light"
}

// TestTypeBadgeFollowsTheTheme: a row drawn on the dark theme and shown again after a switch to
// the light one reads in the light theme's text colour on its pale tint (it read white on pale
// blue), with at least 4.5:1.
func TestTypeBadgeFollowsTheTheme(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	jobs := submitN(t, h, "a.bin")
	u.applyTheme("dark")
	u.Start()
	h.waitFor("the row", func() bool { return h.row(jobs[0].ID) != nil })
	u.applyTheme("light")
	u.refreshList()
	r := h.row(jobs[0].ID)
	bg := theme.Color(theme.ColorNameBackground)
	if got := contrast(r.typ.text.Color, typeColor, bg); got < 4.5 {
		t.Fatalf("the job-type badge reads %v on its tint at %.2f:1 on the light theme", r.typ.text.Color, got)
	}
}

// TestHourChartClearOfScrollBar: at the window's default 1180 px, the metrics' jobs-per-hour
// chart ends left of the scroll bar, so the latest hour's bars are not hidden under it.
func TestHourChartClearOfScrollBar(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	submitN(t, h, "a.bin")
	mv := u.showMetrics()
	h.waitFor("the chart", func() bool { return mv.chart != nil })
	h.pump()
	d := fyne.CurrentApp().Driver()
	chartEnd := d.AbsolutePositionForObject(mv.chart).X + mv.chart.Size().Width
	bar := d.AbsolutePositionForObject(mv.scroll).X + mv.scroll.Size().Width - theme.ScrollBarSize()
	if mv.chart.Size().Width == 0 || chartEnd > bar {
		t.Fatalf("the chart ends at %.0f px, under the scroll bar from %.0f px", chartEnd, bar)
	}
}
