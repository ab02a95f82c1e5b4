package docjob

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"jobdesk/engine/job"
)

// TestPanicTextStaysInTheLog: a PDF whose catalog object is only a reference to another object
// makes the PDF reader panic ("unexpected value type pdf.objptr in resolve"). The job fails
// E004 "damaged" with sentences only; the panic's text is in the log, not in the message, the
// Japanese message or the cause.
func TestPanicTextStaysInTheLog(t *testing.T) {
	var logged bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	defer slog.SetDefault(old)

	data := rawPDF("2 0 R", "<< /Type /Catalog /Pages 3 0 R >>", "<< /Type /Pages /Kids [] /Count 0 >>")
	p := filepath.Join(t.TempDir(), "objptr.pdf")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := newConverter(t)
	_, err := run(t, c, t.TempDir(), Input{Path: p, NoOCR: true})
	var je *job.Error
	if !errors.As(err, &je) || je.Code != job.E004 || je.Name != ErrNameDamaged {
		t.Fatalf("err = %v", err)
	}
	for _, shown := range []string{je.Message, je.MessageJa, je.Cause, je.Error(), je.CauseJSON()} {
		for _, internal := range []string{"panic", "objptr", "resolve", "goroutine", ".go:"} {
			if strings.Contains(shown, internal) {
				t.Errorf("%q shown to the user: %s", internal, shown)
			}
		}
	}
	if !strings.Contains(logged.String(), "objptr") {
		t.Errorf("the internal detail is not in the log:\n%s", logged.String())
	}

	// A converter's own panic (recovered in ConvertKind) goes the same way.
	logged.Reset()
	pe := errPanic(KindDOCX, "runtime error: index out of range [3] with length 2\ngoroutine 7 [running]:")
	if pe.Cause != "" || strings.Contains(pe.Error(), "index out of range") || !strings.Contains(logged.String(), "index out of range") {
		t.Fatalf("panic error %+v, log %s", pe, logged.String())
	}
	// A reason written for people is still shown.
	if e := errDamaged(KindPDF, reason("the document has no pages")); e.Cause != "the document has no pages" {
		t.Fatalf("reason dropped: %+v", e)
	}
}
