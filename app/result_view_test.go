package app

import (
	"encoding/json"
	"testing"

	"jobdesk/assets"
)

// Every well-known result field has a label, and every summary figure its words, in every
// language the window speaks.
func TestResultFieldsLabelled(t *testing.T) {
	for _, lang := range []string{"ja", "en"} {
		b, err := assets.Translations(lang)
		if err != nil {
			t.Fatal(err)
		}
		words := map[string]string{}
		if err := json.Unmarshal(b, &words); err != nil {
			t.Fatal(err)
		}
		for _, k := range resultFieldOrder {
			if _, ok := words["field."+k]; !ok {
				t.Errorf("%s: no label for result field %s", lang, k)
			}
		}
		for _, f := range summaryFigures {
			if _, ok := words[f.words]; !ok {
				t.Errorf("%s: no words %s for summary figure %s", lang, f.words, f.field)
			}
		}
	}
}

// TestGroupDigits: figures get a comma between groups of three digits, signs kept.
func TestGroupDigits(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 12: "12", 999: "999", 1000: "1,000", -45678: "-45,678", 1234567890: "1,234,567,890"} {
		if got := GroupDigits(n); got != want {
			t.Errorf("GroupDigits(%d) = %q; want %q", n, got, want)
		}
	}
}
