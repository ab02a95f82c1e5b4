package ui

import (
	"image/color"
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// contrastTheme is the toolkit's theme with the colours that carry text made dark (light
// variant) or light (dark variant) enough for WCAG AA: every text on a colour, and every colour
// that is text (error, success, warning, primary, hints), has a contrast of at least 4.5:1 with
// what lies under it (TestTextContrast measures each pair). forced holds it to one variant
// whatever the desktop prefers.
type contrastTheme struct {
	fyne.Theme
	variant fyne.ThemeVariant
	forced  bool
}

// accessibleColors replaces the toolkit's colours that fail 4.5:1, per variant.
var accessibleColors = map[fyne.ThemeVariant]map[fyne.ThemeColorName]color.Color{
	theme.VariantLight: withPrimary(color.NRGBA{0x15, 0x65, 0xC0, 0xFF}, map[fyne.ThemeColorName]color.Color{
		theme.ColorNameError:       color.NRGBA{0xC6, 0x28, 0x28, 0xFF},
		theme.ColorNameSuccess:     color.NRGBA{0x1B, 0x7F, 0x3B, 0xFF},
		theme.ColorNameWarning:     color.NRGBA{0x8A, 0x5A, 0x00, 0xFF},
		theme.ColorNamePlaceHolder: color.NRGBA{0x66, 0x66, 0x66, 0xFF},
	}),
	theme.VariantDark: withPrimary(color.NRGBA{0x64, 0xB5, 0xF6, 0xFF}, map[fyne.ThemeColorName]color.Color{
		theme.ColorNameForegroundOnPrimary: color.NRGBA{0x0D, 0x1B, 0x2A, 0xFF},
		theme.ColorNameError:               color.NRGBA{0xFF, 0x8A, 0x80, 0xFF},
		theme.ColorNameForegroundOnError:   color.NRGBA{0x2A, 0x0A, 0x0A, 0xFF},
		theme.ColorNameSuccess:             color.NRGBA{0x81, 0xC7, 0x84, 0xFF},
		theme.ColorNameForegroundOnSuccess: color.NRGBA{0x0A, 0x24, 0x0E, 0xFF},
		theme.ColorNameWarning:             color.NRGBA{0xFF, 0xB7, 0x4D, 0xFF},
		theme.ColorNameForegroundOnWarning: color.NRGBA{0x2A, 0x1A, 0x00, 0xFF},
		theme.ColorNamePlaceHolder:         color.NRGBA{0xA8, 0xA8, 0xA8, 0xFF},
	}),
}

// withPrimary is colors with primary as the primary colour, the hyperlinks' colour and, at
// about half opacity, the focus mark of fields and buttons (the toolkit's is a faint tint).
func withPrimary(primary color.NRGBA, colors map[fyne.ThemeColorName]color.Color) map[fyne.ThemeColorName]color.Color {
	focus := primary
	focus.A = 0x88
	colors[theme.ColorNamePrimary] = primary
	colors[theme.ColorNameHyperlink] = primary
	colors[theme.ColorNameFocus] = focus
	return colors
}

// Color is the accessible colour of n where the toolkit's fails, else the toolkit's.
func (t contrastTheme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	if t.forced {
		v = t.variant
	}
	if c, ok := accessibleColors[v][n]; ok {
		return c
	}
	return t.Theme.Color(n, v)
}

// contrast is the WCAG contrast ratio of a and b (1 to 21), b composited over under when b is
// translucent, and a over the result when a is.
func contrast(a, b, under color.Color) float64 {
	bb := over(b, under)
	la, lb := luminance(over(a, bb)), luminance(bb)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// over is c composited over an opaque under.
func over(c, under color.Color) color.NRGBA {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	u := color.NRGBAModel.Convert(under).(color.NRGBA)
	a := float64(n.A) / 255
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x)*a + float64(y)*(1-a))) }
	return color.NRGBA{mix(n.R, u.R), mix(n.G, u.G), mix(n.B, u.B), 0xFF}
}

// luminance is a colour's relative luminance (WCAG 2).
func luminance(c color.NRGBA) float64 {
	ch := func(v uint8) float64 {
		s := float64(v) / 255
		if s <= 0.03928 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*ch(c.R) + 0.7152*ch(c.G) + 0.0722*ch(c.B)
}
