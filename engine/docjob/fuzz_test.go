package docjob

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"jobdesk/engine/job"
)

// fuzzKind feeds arbitrary bytes to one converter entry point: it must return a Doc or a coded
// *job.Error within the deadline, never panic or hang.
func fuzzKind(f *testing.F, kind Kind, seeds ...string) {
	for _, s := range seeds {
		if b, err := os.ReadFile(filepath.Join("testdata", s)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ConvertKind(context.Background(), data, "fuzz", kind, Options{Timeout: 3 * time.Second, NoOCR: true})
		if err != nil {
			var je *job.Error
			if !errors.As(err, &je) || je.Code == "" || je.Message == "" || je.MessageJa == "" {
				t.Fatalf("uncoded error %T %v", err, err)
			}
			if je.Code == job.E011 {
				// A small input that runs into the deadline is a hang the converter must avoid
				// (its goroutine would keep a core busy after the job has ended).
				t.Fatalf("converter hit its deadline on %d bytes: %v", len(data), err)
			}
			return
		}
		if d == nil {
			t.Fatal("nil Doc without error")
		}
	})
}

func FuzzPDF(f *testing.F) {
	fuzzKind(f, KindPDF, "report.pdf", "scan.pdf", "badxref.pdf", "pw_owner_rc4.pdf")
}
func FuzzDOCX(f *testing.F) { fuzzKind(f, KindDOCX, "report.docx", "truncated.docx") }
func FuzzXLSX(f *testing.F) { fuzzKind(f, KindXLSX, "book.xlsx") }
func FuzzPPTX(f *testing.F) { f.Add(makePPTX(f)); fuzzKind(f, KindPPTX) }
func FuzzXLS(f *testing.F)  { f.Add(makeXLS(f, false)); fuzzKind(f, KindXLS) }
func FuzzCSV(f *testing.F)  { fuzzKind(f, KindCSV, "sjis.csv", "bom.csv") }
func FuzzText(f *testing.F) { fuzzKind(f, KindText, "eucjp.txt") }

func FuzzZip(f *testing.F) {
	f.Add(makeZip(f, []zipEntry{{name: "a.txt", data: []byte("本文")}, {name: "../x", data: []byte("x")}}))
	f.Add(makeZip(f, []zipEntry{{name: "b.txt", data: []byte("AAAA"), declared: 2}}))
	fuzzKind(f, KindZIP)
}

// FuzzConvert goes through detection first, as the job does.
func FuzzConvert(f *testing.F) {
	for _, s := range []string{"report.pdf", "report.docx", "book.xlsx", "sjis.csv"} {
		if b, err := os.ReadFile(filepath.Join("testdata", s)); err == nil {
			f.Add(b, s)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		_, err := Convert(context.Background(), data, name, Options{Timeout: 3 * time.Second, NoOCR: true})
		if err != nil {
			var je *job.Error
			if !errors.As(err, &je) || je.Code == "" {
				t.Fatalf("uncoded error %T %v", err, err)
			}
		}
	})
}
