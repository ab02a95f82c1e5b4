// Package ui owns JobDesk's desktop window: the drop zone, the virtualized job list with live
// progress, the status filter, the detail pane — with every family's result readable in full
// (results_*.go: rejected CSV rows, documents, AI goals and requirements, each savable anywhere)
// and the history as a timeline (timeline.go) — the goal form and the settings dialog. It talks
// to the app layer's service API and event stream only, never to SQL, so the window shows
// exactly what the command line and the engine see. Updates from the engine arrive on the queue's
// event stream, are coalesced off the UI thread and applied with fyne.Do about ten times a
// second, so thousands of progress reports per second never flood the window.
package ui

import (
	"encoding/json"
	"fmt"
	"strings"

	"fyne.io/fyne/v2/lang"

	"jobdesk/assets"
)

// Languages the window speaks; Japanese is the default.
const (
	LangJa = "ja"
	LangEn = "en"
)

// translator looks words up in one language's dictionary (assets/translations/<lang>.json),
// falling back to English and then to the key itself, so a missing entry shows something
// readable instead of nothing.
type translator struct {
	lang     string
	words    map[string]string
	fallback map[string]string
}

// loadDict reads one embedded dictionary; a missing or broken file yields an empty one.
func loadDict(lang string) map[string]string {
	m := map[string]string{}
	b, err := assets.Translations(lang)
	if err != nil {
		return m
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return map[string]string{}
	}
	return m
}

// newTranslator returns the translator for lang ("ja" when lang is unknown).
func newTranslator(lang string) *translator {
	if lang != LangEn {
		lang = LangJa
	}
	return &translator{lang: lang, words: loadDict(lang), fallback: loadDict(LangEn)}
}

// T returns the sentence for key, formatted with args when given (fmt verbs in the sentence).
func (t *translator) T(key string, args ...any) string {
	s, ok := t.words[key]
	if !ok {
		s, ok = t.fallback[key]
	}
	if !ok {
		s = key
	}
	if len(args) > 0 {
		return fmt.Sprintf(s, args...)
	}
	return s
}

// lookup returns key's sentence in this language or the fallback, and whether there is one.
func (t *translator) lookup(key string) (string, bool) {
	if s, ok := t.words[key]; ok {
		return s, true
	}
	s, ok := t.fallback[key]
	return s, ok
}

// Has reports whether key has a sentence in this language or the fallback.
func (t *translator) Has(key string) bool {
	if _, ok := t.words[key]; ok {
		return true
	}
	_, ok := t.fallback[key]
	return ok
}

// systemLanguage is the window's language until someone chooses one: the system's language
// when the window speaks it, Japanese otherwise.
func systemLanguage() string { return languageFor(lang.SystemLocale().LanguageString()) }

// languageFor maps a locale ("en-US", "ja", "en_GB.UTF-8", "C") to a language of the window:
// English for English, Japanese, the product's default, for everything else.
func languageFor(locale string) string {
	l := strings.ToLower(strings.TrimSpace(locale))
	if l == "en" || strings.HasPrefix(l, "en-") || strings.HasPrefix(l, "en_") || strings.HasPrefix(l, "en.") {
		return LangEn
	}
	return LangJa
}
