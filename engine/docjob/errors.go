package docjob

import (
	"errors"
	"fmt"
	"log/slog"

	"jobdesk/engine/job"
)

// Step Functions error names of docjob's errors, so a workflow's Retry and Catch can tell them
// apart; ErrorCode maps a name back to its JobDesk code.
const (
	ErrNameTooLarge    = "Document.TooLarge"          // E003: file, entry, archive or nesting over a limit
	ErrNameDamaged     = "Document.Damaged"           // E004: the file cannot be read
	ErrNameEmpty       = "Document.Empty"             // E004: the file has no bytes at all
	ErrNameUnsupported = "Document.Unsupported"       // E004: a type JobDesk does not convert
	ErrNameNothing     = "Document.NothingToConvert"  // E004: an archive with no convertible entry
	ErrNamePassword    = "Document.PasswordProtected" // E005
	ErrNameEncoding    = "Document.UnreadableText"    // E006: text in no supported encoding
	// ErrNameTimeout is a conversion that ran past its own deadline (E011). It is not
	// States.Timeout, so the workflow does not re-run a conversion that would only time out again.
	ErrNameTimeout = "Document.Timeout"
)

var errNameCodes = map[string]job.Code{
	ErrNameTooLarge: job.E003, ErrNameDamaged: job.E004, ErrNameEmpty: job.E004, ErrNameUnsupported: job.E004,
	ErrNameNothing: job.E004, ErrNamePassword: job.E005, ErrNameEncoding: job.E006, ErrNameTimeout: job.E011,
	"States.Timeout": job.E011,
}

// ErrorCode returns the JobDesk code of a Step Functions error name docjob uses, or "".
func ErrorCode(name string) job.Code { return errNameCodes[name] }

// errPassword is the error for a password-protected file: E005, never "damaged".
func errPassword(kind Kind) *job.Error {
	return job.Errorf(job.E005, "the %s file is password-protected; remove the password and try again", kind.Label()).
		WithJa(fmt.Sprintf("%sファイルはパスワードで保護されています。パスワードを解除してから再度お試しください。", kind.LabelJa())).
		WithName(ErrNamePassword)
}

// errDamaged is the error for a file that claims a kind but cannot be read: E004 "damaged".
// Only a reason (a sentence JobDesk wrote) is shown to people as the cause; anything else (a
// library's error, a recovered panic) is internal detail: it goes to the log, and stays in the
// error's Err for the program, never in Message, MessageJa or Cause.
func errDamaged(kind Kind, cause error) *job.Error {
	e := job.Wrap(job.E004, nil, fmt.Sprintf("the %s file is damaged and cannot be read", kind.Label()))
	e.Err = cause
	var r reason
	switch {
	case errors.As(cause, &r):
		e.Cause = string(r)
	case cause != nil:
		logDetail(kind, cause.Error())
	}
	return e.WithJa(fmt.Sprintf("%sファイルが破損しているため読み取れません。", kind.LabelJa())).WithName(ErrNameDamaged)
}

// reason is a cause written for people ("the document has no pages"): errDamaged shows it.
type reason string

func (r reason) Error() string { return string(r) }

// logDetail records what went wrong inside a converter for whoever reads the log.
func logDetail(kind Kind, detail string) {
	slog.Warn("document conversion failed", "kind", string(kind), "detail", detail)
}

// errEmpty is the error for a file of 0 bytes, whatever its name claims: there is nothing to
// convert, so it fails (E004) instead of "succeeding" as an empty document.
func errEmpty() *job.Error {
	return job.Errorf(job.E004, "the file is empty (0 bytes)").
		WithJa("ファイルが空です（0 バイト）。").WithName(ErrNameEmpty)
}

// errUnsupported is the error for a kind JobDesk does not convert: E004 naming the type.
func errUnsupported(kind Kind) *job.Error {
	return job.Errorf(job.E004, "unsupported file type: %s", kind.Label()).
		WithJa(fmt.Sprintf("対応していないファイル形式です: %s", kind.LabelJa())).WithName(ErrNameUnsupported)
}

// errTooLarge is the error for a file, part or archive over a limit: E003. what and whatJa name
// it in each language ("the file" / "ファイル").
func errTooLarge(what, whatJa string, size, limit int64) *job.Error {
	return job.Errorf(job.E003, "%s is too large: %s (limit %s)", what, humanSize(size), humanSize(limit)).
		WithJa(fmt.Sprintf("%sが大きすぎます: %s（上限 %s）", whatJa, humanSize(size), humanSize(limit))).WithName(ErrNameTooLarge)
}

// errTimeout is the error when a converter exceeded its deadline: E011 named ErrNameTimeout,
// which document-conversion.asl.json does not retry (converting the same bytes again would
// take as long).
func errTimeout(kind Kind) *job.Error {
	return job.Errorf(job.E011, "converting the %s file took too long and was stopped", kind.Label()).
		WithJa(fmt.Sprintf("%sファイルの変換に時間がかかりすぎたため停止しました。", kind.LabelJa())).WithName(ErrNameTimeout)
}

// errPanic is the error for a recovered panic inside a converter: E004 damaged for the user
// (the input provoked it); the panic's text and stack go to the log only.
func errPanic(kind Kind, p any) *job.Error {
	return errDamaged(kind, fmt.Errorf("converter panic: %v", p))
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
