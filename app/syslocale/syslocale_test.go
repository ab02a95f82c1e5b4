package syslocale

import (
	"os"
	"testing"

	"fyne.io/fyne/v2/lang"
)

// A charset-qualified C locale reads as English, for the toolkit too; a real language or an
// explicit LANGUAGE is left alone.
func TestNormalize(t *testing.T) {
	cases := []struct {
		lcAll, lang, language string
		want                  string // LANGUAGE afterwards
	}{
		{lang: "C.UTF-8", want: "en"},
		{lang: "POSIX.utf8", want: "en"},
		{lcAll: "C.UTF-8", lang: "ja_JP.UTF-8", want: "en"},
		{lang: "C", want: ""}, // plain C already reads as no preference
		{lang: "ja_JP.UTF-8", want: ""},
		{lcAll: "ja_JP.UTF-8", lang: "C.UTF-8", want: ""},
		{lang: "C.UTF-8", language: "ja", want: "ja"},
	}
	for _, c := range cases {
		t.Setenv("LC_ALL", c.lcAll)
		t.Setenv("LC_MESSAGES", "")
		t.Setenv("LANG", c.lang)
		t.Setenv("LANGUAGE", c.language)
		Normalize()
		if got := os.Getenv("LANGUAGE"); got != c.want {
			t.Errorf("LC_ALL=%q LANG=%q LANGUAGE=%q: LANGUAGE=%q, want %q", c.lcAll, c.lang, c.language, got, c.want)
		}
	}
	t.Setenv("LC_ALL", "")
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("LANGUAGE", "")
	Normalize()
	if got := lang.SystemLocale().LanguageString(); got != "en" {
		t.Errorf("toolkit locale under C.UTF-8: %q, want en", got)
	}
}
