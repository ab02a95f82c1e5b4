package cli

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jobdesk/app"
	"jobdesk/app/aifamily"
	"jobdesk/app/convertfamily"
	"jobdesk/app/family"
	"jobdesk/engine/aijob"
	"jobdesk/engine/docjob"
	"jobdesk/engine/job"
)

// noAIService clears every variable that sets an AI service up, so only the data folder counts.
func noAIService(t *testing.T) {
	for _, k := range []string{aifamily.EnvEndpoint, aifamily.EnvModel, aifamily.EnvProvider, "JOBDESK_AI_FALLBACK_MODEL",
		"JOBDESK_BEDROCK_REGION", "JOBDESK_BEDROCK_MODEL", "JOBDESK_BEDROCK_ENDPOINT"} {
		t.Setenv(k, "")
	}
}

// blankPNG writes a small white PNG image.
func blankPNG(t *testing.T, name string) string {
	img := image.NewGray(image.Rect(0, 0, 40, 20))
	for i := range img.Pix {
		img.Pix[i] = 0xFF
	}
	img.Set(3, 3, color.Black)
	var b bytes.Buffer
	png.Encode(&b, img)
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// With no AI service set up, a caption job fails at once (E014, both languages) saying where to
// set one up, instead of waiting PENDING for a provider nobody configured.
func TestCaptionWithoutAIServiceFailsAtOnce(t *testing.T) {
	noAIService(t)
	dir := t.TempDir()
	img := blankPNG(t, "写真.png")
	code, out, errOut := runCLI(t, "--data-dir", dir, "run", "--type", aijob.TypeCaption, "--wait", "--json", img)
	j := decodeJob(t, out)
	if code != ExitFailed || j.Status != job.Failed || j.Error == nil || j.Error.Code != job.E014 || j.Attempts != 1 {
		t.Fatalf("exit %d %s %+v\n%s", code, j.Status, j.Error, errOut)
	}
	if !strings.Contains(j.Error.Message, "Settings → AI") || !strings.Contains(j.Error.MessageJa, "設定 → AI") {
		t.Fatalf("the error does not say where to set a service up: %+v", j.Error)
	}
	// Once ai.json exists, the same image is a caption job again (it would wait for the server).
	os.WriteFile(filepath.Join(dir, aifamily.SettingsFile), []byte(`{"endpoint":"http://127.0.0.1:9/v1"}`), 0o600)
	a, ctx := openTestApp(t, dir)
	js, err := a.Submit(ctx, []string{img}, app.SubmitOptions{Force: true})
	if err != nil || len(js) != 1 || js[0].Type != aijob.TypeCaption {
		t.Fatalf("%v %+v", err, js)
	}
}

// A dropped image goes to OCR (a conversion) when no AI service is set up and tesseract is
// installed; to a caption when a service is set up.
func TestDroppedImageRouting(t *testing.T) {
	img := blankPNG(t, "scan.png")
	noAIService(t)
	a, ctx := openTestApp(t, t.TempDir())
	js, err := a.Submit(ctx, []string{img}, app.SubmitOptions{})
	if err != nil || len(js) != 1 {
		t.Fatal(err)
	}
	want := aijob.TypeCaption
	if ok, _ := docjob.ImageOCRAvailable(); ok {
		want = "convert"
	}
	if js[0].Type != want {
		t.Fatalf("no AI service: the image became %s, want %s", js[0].Type, want)
	}
	aiEnv(t, "http://127.0.0.1:9/v1")
	b, ctx2 := openTestApp(t, t.TempDir())
	if js, err = b.Submit(ctx2, []string{img}, app.SubmitOptions{}); err != nil || js[0].Type != aijob.TypeCaption {
		t.Fatalf("with an AI service: %v %+v", err, js)
	}
}

// `run --wait --timeout` gives up while the AI provider set up does not answer: it says the
// provider is offline and where to look, exits 1, and leaves the job queued.
func TestRunWaitGivesUpWhileProviderOffline(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	aiEnv(t, "http://"+addr+"/v1")
	dir := t.TempDir()
	img := blankPNG(t, "会議.png")
	done := make(chan [3]string, 1)
	go func() {
		code, out, errOut := runCLI(t, "--data-dir", dir, "run", "--wait", "--timeout", "2s", img)
		done <- [3]string{itoa(int64(code)), out, errOut}
	}()
	var r [3]string
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute): // a hang, not a speed limit
		t.Fatal("run --wait --timeout 2s did not return")
	}
	if r[0] != itoa(ExitFailed) || !strings.Contains(r[2], "E011") || !strings.Contains(r[2], "gave up waiting after 2s") ||
		!strings.Contains(r[2], aijob.OfflineMessage) || !strings.Contains(r[2], "Settings → AI") {
		t.Fatalf("exit %s\nstdout %s\nstderr %s", r[0], r[1], r[2])
	}
	a, ctx := openTestApp(t, dir)
	js, err := a.List(ctx, app.ListFilter{})
	if err != nil || len(js) != 1 || js[0].Status.Final() {
		t.Fatalf("the job must stay queued: %v %+v", err, js)
	}
}

// A file named as a document whose bytes are not that document (text saved as report.pdf) is a
// conversion that fails E004 naming the claimed type, not a checksum job that succeeds.
func TestNamedPDFThatIsTextFails(t *testing.T) {
	in := t.TempDir()
	p := writeTemp(t, in, "報告書.pdf", []byte("これは PDF ではなくテキストです。\n"))
	if got := (&convertfamily.Family{}).Detect(p, family.ReadHead(p)); got != convertfamily.Type {
		t.Fatalf("detected as %q", got)
	}
	code, j, errOut := convertCLI(t, t.TempDir(), p)
	if code != ExitFailed || j.Type != convertfamily.Type || j.Status != "FAILED" || j.Error == nil || j.Error.Code != "E004" ||
		!strings.Contains(j.Error.Message, "PDF") || j.Error.MessageJa == "" {
		t.Fatalf("exit %d %s %+v\n%s", code, j.Status, j.Error, errOut)
	}
}

// --timeout takes a duration; anything else is a usage error in both languages.
func TestRunTimeoutMustBeADuration(t *testing.T) {
	img := blankPNG(t, "a.png")
	code, _, errOut := runCLI(t, "--data-dir", t.TempDir(), "run", "--wait", "--timeout", "soon", img)
	if code != ExitUsage || !strings.Contains(errOut, "90s") || !strings.Contains(errOut, "時間ではありません") {
		t.Fatalf("exit %d %s", code, errOut)
	}
}
