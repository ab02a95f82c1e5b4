package ui

import (
	"strings"
	"testing"
	"time"

	"jobdesk/engine/job"
)

// TestTimelineFoldsWaiting: a waiting AI job handed back to the queue again and again reads as
// one line with a count and how long it waited, in words, with no internal names.
func TestTimelineFoldsWaiting(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 9, 0, 0, 0, time.Local)
	hist := []job.Event{{Kind: job.EventSubmitted, Status: job.Pending, At: t0}}
	for i := 0; i < 40; i++ {
		hist = append(hist,
			job.Event{Kind: job.EventStarted, Status: job.Running, At: t0.Add(time.Duration(5*i+1) * time.Second)},
			job.Event{Kind: "TaskLeaseReleased", Status: job.Pending, Message: "AI provider offline", At: t0.Add(time.Duration(5*i+1) * time.Second)})
	}
	hist = append(hist, job.Event{Kind: job.EventStarted, Status: job.Running, At: t0.Add(300 * time.Second)},
		job.Event{Kind: job.EventSucceeded, Status: job.Succeeded, Message: "ProcessUserDataParallel: 18000000 of 18000000 items", At: t0.Add(330 * time.Second)})
	entries := foldHistory(hist, t0.Add(time.Hour), true)
	if len(entries) != 4 || entries[1].Count != 40 || entries[1].Took != 299*time.Second || entries[3].Took != 0 {
		t.Fatalf("%+v", entries)
	}
	h := newHarness(t, LangJa)
	u := h.ui
	u.detail.gen++
	text := strings.Join(labelTexts(u.detail.timeline(job.Job{ID: 1, Status: job.Succeeded, ParentID: 1}, hist)), "\n")
	for _, want := range []string{"待機に戻りました  （40 回）  ·  4 min 59 s", "AI サービスに接続できないため待機しています",
		"データを並列処理中：18,000,000 / 18,000,000 件"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	for _, leak := range []string{"TaskLeaseReleased", "ProcessUserDataParallel", "AI provider offline"} {
		if strings.Contains(text, leak) {
			t.Errorf("%q leaks:\n%s", leak, text)
		}
	}
	if n := strings.Count(text, "待機に戻りました"); n != 1 {
		t.Errorf("%d waiting lines, want 1", n)
	}
}

// TestHumanMessages: internal names become words; counts get digit groups; dates, times, job
// numbers and digests stay as they are.
func TestHumanMessages(t *testing.T) {
	tr := newTranslator(LangJa)
	for in, want := range map[string]string{
		"18000000 行":                      "18,000,000 行",
		"2964 of 3000 rows accepted":      "2,964 of 3,000 rows accepted",
		"job #12345 at 2026-11-24 17:03":  "job #12345 at 2026-11-24 17:03",
		"CheckValidationResult":           "確認結果を判定中",
		"SomeNewStateName: 3 of 4 items":  "処理中：3 / 4 件",
		"1.5 s, 2026年, v1234, abc12345ef": "1.5 s, 2026年, v1234, abc12345ef",
		"ready":                           "完了",
		"4096 / 65536 bytes":              "4,096 / 65,536 バイト",
		"OCR: page 3 of 12":               "OCR：3 / 12 ページ",
		"page 1200 of 1500":               "1,200 / 1,500 ページ",
		"sheet 2 of 5":                    "2 / 5 シート",
		"Convert: OCR: page 3 of 12":      "変換中：OCR：3 / 12 ページ",
		"Convert: page 5 of 10":           "変換中：5 / 10 ページ",
	} {
		if got := humanMessage(tr, in); got != want {
			t.Errorf("humanMessage(%q) = %q; want %q", in, got, want)
		}
	}
}
