package ui

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"jobdesk/app/aifamily"
	"jobdesk/engine/aijob/aitest"
)

// TestSettingsPersist: each page's Save writes the data folder's files (ai.json with the keys a
// hand edit uses, keeping the ones the page does not show; settings.json), a reopened dialog
// shows them again, and the theme applies at once.
func TestSettingsPersist(t *testing.T) {
	for _, lang := range []string{LangJa, LangEn} {
		t.Run(lang, func(t *testing.T) {
			h := newHarness(t, lang)
			u := h.ui
			dir := h.app.DataDir()
			// A hand-edited ai.json with prices the page does not show.
			hand := `{"provider":"openai","model":"hand-model","prices":{"hand-model":{"input_per_1k":0.5}}}`
			if err := os.WriteFile(filepath.Join(dir, "ai.json"), []byte(hand), 0o644); err != nil {
				t.Fatal(err)
			}
			sd := u.openSettings()
			if sd.model.Text != "hand-model" {
				t.Fatalf("the AI page shows model %q, not the hand edit", sd.model.Text)
			}
			sd.provider.SetSelected(u.tr.T("settings.ai.bedrock"))
			sd.bRegion.SetText("ap-northeast-1")
			sd.fallback.SetText("small-model")
			tapButton(t, sd.tabs.Items[1].Content, u.tr.T("settings.save"))
			var file map[string]any
			b, _ := os.ReadFile(filepath.Join(dir, "ai.json"))
			if err := json.Unmarshal(b, &file); err != nil {
				t.Fatal(err)
			}
			if file["provider"] != "bedrock" || file["bedrock_region"] != "ap-northeast-1" || file["fallback_model"] != "small-model" ||
				file["model"] != "hand-model" || file["prices"] == nil {
				t.Fatalf("ai.json = %s", b)
			}
			if s, err := aifamily.LoadSettings(dir); err != nil || s.Provider != "bedrock" || s.FallbackModel != "small-model" {
				t.Fatalf("LoadAISettings = %+v, %v", s, err)
			}

			sd.percent.SetText("12.5")
			sd.count.SetText("9")
			tapButton(t, sd.tabs.Items[2].Content, u.tr.T("settings.save"))
			sd.ocr.SetChecked(false)
			sd.furigana.SetChecked(true)
			sd.maxPages.SetText("300")
			tapButton(t, sd.tabs.Items[3].Content, u.tr.T("settings.save"))
			sd.workers.SetText("3")
			tapButton(t, sd.tabs.Items[4].Content, u.tr.T("settings.save"))
			sd.theme.SetSelected(u.tr.T("settings.theme.dark"))
			sd.notify.SetChecked(false)
			set := h.app.Settings()
			if set.CSV.TolerancePercent != 12.5 || set.CSV.ToleranceCount != 9 || set.Docs.OCR || !set.Docs.Furigana ||
				set.Docs.MaxPages != 300 || set.Engine.Workers != 3 || set.Theme != "dark" || set.NotifyOn() {
				t.Fatalf("settings.json = %+v", set)
			}
			if th, ok := u.fyneApp.Settings().Theme().(contrastTheme); !ok || !th.forced || th.variant != theme.VariantDark {
				t.Fatal("the dark theme did not apply")
			}
			extra := set.SubmitExtra()
			if extra["tolerate-percent"] != "12.5" || extra["no-ocr"] != "true" || extra["furigana"] != "true" {
				t.Fatalf("submit extra = %v", extra)
			}
			// A bad number is refused on the page, and nothing is written.
			sd.workers.SetText("many")
			tapButton(t, sd.tabs.Items[4].Content, u.tr.T("settings.save"))
			if sd.message.Importance != 4 && !strings.Contains(sd.message.Text, "E014") {
				t.Fatalf("bad worker count: %q", sd.message.Text)
			}
			sd.d.Hide()
			again := u.openSettings()
			if again.percent.Text != "12.5" || again.workers.Text != "3" || again.maxPages.Text != "300" || again.furigana.Checked == false {
				t.Fatal("a reopened dialog does not show the saved values")
			}
			_ = test.LaidOutObjects(again.tabs)
		})
	}
}

// TestAIConnectionTest: Test connection sends one request with the page's settings and says
// which provider and model answered; a server that does not answer is said plainly.
func TestAIConnectionTest(t *testing.T) {
	srv := aitest.NewOpenAI(t, nil)
	h := newHarness(t, LangEn)
	u := h.ui
	sd := u.openSettings()
	sd.endpoint.SetText(srv.URL)
	sd.model.SetText("tiny")
	sd.testAI()
	h.waitFor("the answer", func() bool { return !sd.aiTesting })
	if !strings.Contains(sd.aiResult.Text, "openai") || !strings.Contains(sd.aiResult.Text, "tiny") {
		t.Fatalf("test result = %q", sd.aiResult.Text)
	}
	if n := len(srv.Calls()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	sd.endpoint.SetText("http://127.0.0.1:1/v1")
	sd.testAI()
	h.waitFor("the failure", func() bool { return !sd.aiTesting })
	if !strings.HasPrefix(sd.aiResult.Text, "No answer") {
		t.Fatalf("failed test = %q", sd.aiResult.Text)
	}
	// Nothing listens: the answer names the address, in the window's language, not E016.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	u.SetLanguage(LangJa)
	sd = u.openSettings()
	sd.endpoint.SetText(addr)
	sd.testAI()
	h.waitFor("the failure", func() bool { return !sd.aiTesting })
	if !strings.Contains(sd.aiResult.Text, addr) || !strings.Contains(sd.aiResult.Text, "応答がありません") ||
		strings.Contains(sd.aiResult.Text, "E016") {
		t.Fatalf("failed test = %q; want the address that did not answer", sd.aiResult.Text)
	}
}

// tapButton taps the button labelled text inside o.
func tapButton(t *testing.T, o fyne.CanvasObject, text string) {
	t.Helper()
	b := buttonIn(o, text)
	if b == nil {
		t.Fatalf("no button %q", text)
	}
	test.Tap(b)
}
