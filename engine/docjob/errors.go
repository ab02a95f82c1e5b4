package docjob

import (
	"fmt"

	"jobdesk/engine/job"
)

// errPassword is the error for a password-protected file: E005, never "damaged".
func errPassword(kind Kind) *job.Error {
	return job.Errorf(job.E005, "the %s file is password-protected; remove the password and try again", kind.Label()).
		WithJa(fmt.Sprintf("%sファイルはパスワードで保護されています（password-protected）。パスワードを解除してから再度お試しください。", kind.Label())).
		WithName("BusinessError")
}

// errDamaged is the error for a file that claims a kind but cannot be read: E004 "damaged".
func errDamaged(kind Kind, cause error) *job.Error {
	e := job.Wrap(job.E004, cause, fmt.Sprintf("the %s file is damaged and cannot be read", kind.Label()))
	return e.WithJa(fmt.Sprintf("%sファイルが破損しているため読み取れません（damaged）。", kind.Label())).WithName("BusinessError")
}

// errUnsupported is the error for a kind JobDesk does not convert: E004 naming the type.
func errUnsupported(kind Kind) *job.Error {
	return job.Errorf(job.E004, "unsupported file type: %s", kind.Label()).
		WithJa(fmt.Sprintf("対応していないファイル形式です: %s", kind.Label())).WithName("BusinessError")
}

// errTooLarge is the error for a file or archive over a seed limit: E003.
func errTooLarge(what string, size, limit int64) *job.Error {
	return job.Errorf(job.E003, "%s is too large: %s (limit %s)", what, humanSize(size), humanSize(limit)).
		WithJa(fmt.Sprintf("%sが大きすぎます: %s（上限 %s）", what, humanSize(size), humanSize(limit))).WithName("BusinessError")
}

// errTimeout is the error when a converter exceeded its deadline: E011, retryable.
func errTimeout(kind Kind) *job.Error {
	return job.Errorf(job.E011, "converting the %s file took too long and was stopped", kind.Label()).
		WithJa(fmt.Sprintf("%sファイルの変換に時間がかかりすぎたため停止しました。", kind.Label())).WithName("States.Timeout")
}

// errInternal is the error for a recovered panic inside a converter: E004 damaged for the user
// (the input provoked it) with the panic text as the cause.
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
