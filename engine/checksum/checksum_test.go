package checksum

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"jobdesk/engine/job"
)

func TestHandler(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "データ.bin")
	data := make([]byte, 9<<20+5)
	for i := range data {
		data[i] = byte(i * 31)
	}
	os.WriteFile(p, data, 0o600)
	var last float64
	calls := 0
	out, err := Handler(nil)(context.Background(), json.RawMessage(`{"path":"`+p+`"}`), job.ReporterFunc(func(pct float64, _ string) {
		if pct < last {
			t.Fatalf("progress went back: %v after %v", pct, last)
		}
		last = pct
		calls++
	}))
	if err != nil {
		t.Fatal(err)
	}
	var res Result
	json.Unmarshal(out, &res)
	sum := sha256.Sum256(data)
	if res.SHA256 != hex.EncodeToString(sum[:]) || res.Bytes != int64(len(data)) {
		t.Fatalf("%+v", res)
	}
	if last != 100 || calls < 3 {
		t.Fatalf("progress %v in %d calls", last, calls)
	}
	for _, bad := range []string{`{}`, `{"path":"` + filepath.Join(dir, "missing") + `"}`, `{"path":"` + dir + `"}`, `[`} {
		_, err := Handler(nil)(context.Background(), json.RawMessage(bad), job.Discard)
		je := job.AsError(err)
		if je == nil || je.Code == job.E016 || je.MessageJa == "" {
			t.Fatalf("%s: %v", bad, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Handler(nil)(ctx, json.RawMessage(`{"path":"`+p+`"}`), job.Discard); err == nil {
		t.Fatal("cancelled context ignored")
	}
}
