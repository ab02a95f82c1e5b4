package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
)

// shownTexts is every text o shows laid out: labels, buttons, rich text, canvas text, choices.
func shownTexts(o fyne.CanvasObject) []string {
	var out []string
	for _, c := range test.LaidOutObjects(o) {
		switch w := c.(type) {
		case *widget.Label:
			out = append(out, w.Text)
		case *widget.Button:
			out = append(out, w.Text)
		case *widget.RichText:
			out = append(out, w.String())
		case *canvas.Text:
			out = append(out, w.Text)
		case *widget.Select:
			out = append(out, w.Options...)
			out = append(out, w.PlaceHolder)
		case *widget.RadioGroup:
			out = append(out, w.Options...)
		case *widget.Check:
			out = append(out, w.Text)
		case *widget.Entry:
			out = append(out, w.PlaceHolder)
		case *keyEntry:
			out = append(out, w.PlaceHolder)
		}
	}
	return out
}

// englishWord finds a word of English in a text: three or more Latin letters, not all capitals
// (an acronym: CSV, OCR, README).
var englishWord = regexp.MustCompile(`[A-Za-z]{3,}`)

// internalName finds an internal name: capitals joined by underscores (SUBGOAL_GENERATION).
var internalName = regexp.MustCompile(`[A-Z]{2,}_[A-Z_]{2,}`)

// fileName finds a file name's extension.
var fileName = regexp.MustCompile(`\.[A-Za-z0-9]{2,4}\b`)

// untranslated are the Latin words a Japanese window may show: names of products and formats,
// the language choice, and what people typed or the files are called.
var untranslated = map[string]bool{
	"JobDesk": true, "English": true, "Excel": true, "Markdown": true, "Word": true, "Bedrock": true,
	"Amazon": true, "Ctrl": true, "Ollama": true, "Step": true, "Functions": true, "Lambda": true, "Windows": true, "tesseract": true, "txt": true,
}

// englishIn returns the texts of texts that show English words, apart from file names, paths,
// addresses and the words untranslated allows.
func englishIn(texts []string, allowed ...string) []string {
	var bad []string
	seen := map[string]bool{}
	for _, s := range texts {
		if seen[s] {
			continue
		}
		seen[s] = true
		t := s
		for _, a := range allowed {
			if strings.Contains(a, strings.TrimSpace(s)) {
				t = "" // a part of an allowed text, cut where it wrapped
			}
			t = strings.ReplaceAll(t, a, "")
		}
		for _, f := range strings.Fields(t) {
			if internalName.MatchString(f) {
				bad = append(bad, fmt.Sprintf("%q (%s)", s, internalName.FindString(f)))
				break
			}
			if strings.ContainsAny(f, "/\\:@0123456789") || fileName.MatchString(f) {
				continue // a path, an address, a file name, a number or digest
			}
			if w := englishWord.FindString(f); w != "" && !untranslated[w] && strings.ToUpper(w) != w {
				bad = append(bad, fmt.Sprintf("%q (%s)", s, w))
				break
			}
		}
	}
	return bad
}

// TestJapaneseWindowSpeaksJapanese: what the Japanese window shows — the list and the detail of
// finished and failed jobs with their history, every settings page, the metrics — has no
// English or internal words left untranslated (step names, job types, history lines).
func TestJapaneseWindowSpeaksJapanese(t *testing.T) {
	h := newHarness(t, LangJa)
	u := h.ui
	dir := t.TempDir()
	var bad strings.Builder
	bad.WriteString("ユーザーID,ログイン回数,投稿回数\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&bad, "X%d,abc,-1\n", i)
	}
	files := map[string]string{
		"broken.csv": bad.String(),
		"memo.txt":   strings.Repeat("本日の会議では来期の予算について話し合った。\n", 20),
	}
	var paths []string
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	if err := h.app.StartEngine(u.ctx); err != nil {
		t.Fatal(err)
	}
	u.Start()
	jobs, err := h.app.Submit(context.Background(), paths, app.SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sums := submitN(t, h, "check.bin")
	jobs = append(jobs, sums...)
	var texts []string
	names := []string{"check.bin"}
	for _, j := range jobs {
		names = append(names, j.Name)
		ctx, cancel := context.WithTimeout(context.Background(), 60*1e9)
		done, err := h.app.Wait(ctx, j.ID)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		h.waitFor("the job in the list", func() bool { _, ok := u.model.index[j.ID]; return ok })
		u.list.Select(u.model.index[j.ID])
		h.waitFor("its detail", func() bool { return u.detail.shown == done.Status })
		if done.Error != nil {
			// A coded error reads in both languages, Japanese first (errorBody), by design.
			names = append(names, done.Error.Message, groupNumbers(done.Error.Message))
		}
		h.pump()
		texts = append(texts, shownTexts(u.Window.Content())...)
	}
	u.showSettings()
	for i := range u.settingsDlg.tabs.Items {
		u.settingsDlg.tabs.SelectIndex(i)
		h.pump()
		texts = append(texts, shownTexts(u.Window.Canvas().Overlays().Top())...)
	}
	u.closeTopDialog()
	u.showMetrics()
	h.pump()
	texts = append(texts, shownTexts(u.Window.Canvas().Overlays().Top())...)
	if b := englishIn(texts, append(names, u.app.DataDir(), "Drop files here")...); len(b) > 0 {
		t.Fatalf("the Japanese window shows %d untranslated texts:\n%s", len(b), strings.Join(b, "\n"))
	}
}

// TestStepNamesSpeakJapanese: every state of the shipped workflows, as a job under way reports
// it (its message is the state's name: "Route", "Ingest", "Convert"), reads in Japanese.
func TestStepNamesSpeakJapanese(t *testing.T) {
	tr := newTranslator(LangJa)
	files, err := filepath.Glob("../assets/workflows/*.asl.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflows: %v", err)
	}
	var bad []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range stateNames(t, b) {
			if msg := humanMessage(tr, name); len(englishIn([]string{msg})) > 0 || msg == tr.T("step.other") {
				bad = append(bad, fmt.Sprintf("%s: %s reads %q", filepath.Base(f), name, msg))
			}
		}
	}
	if len(bad) > 0 {
		t.Fatalf("%d state names do not read in Japanese:\n%s", len(bad), strings.Join(bad, "\n"))
	}
}

// stateNames lists the states of an ASL document, those of its Map and Parallel states included.
func stateNames(t *testing.T, b []byte) []string {
	var doc struct {
		States map[string]json.RawMessage
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for name, raw := range doc.States {
		out = append(out, name)
		var st struct {
			ItemProcessor, Iterator json.RawMessage
			Branches                []json.RawMessage
		}
		_ = json.Unmarshal(raw, &st)
		for _, sub := range append([]json.RawMessage{st.ItemProcessor, st.Iterator}, st.Branches...) {
			if len(sub) > 0 {
				out = append(out, stateNames(t, sub)...)
			}
		}
	}
	return out
}
