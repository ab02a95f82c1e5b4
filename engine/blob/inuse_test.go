package blob

import (
	"errors"
	"io/fs"
	"testing"

	"jobdesk/engine/job"
)

func TestInUseError(t *testing.T) {
	if InUse(nil) || InUse(fs.ErrNotExist) || InUse(errors.New("other")) {
		t.Fatal("an ordinary error reads as a file in use")
	}
	e := InUseError("売上.xlsx", errors.New("sharing violation"))
	if e.Code != job.E014 || !e.Retryable || e.ErrorName() != "FileInUse" {
		t.Fatalf("got %s retryable=%v name=%s", e.Code, e.Retryable, e.ErrorName())
	}
}
