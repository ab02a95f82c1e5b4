package blob

import (
	"errors"

	"jobdesk/engine/job"
)

// Refused returns the coded error a path rule (Local.Allow) refused err's path with — the
// sentence that says the file lies outside the folders JobDesk may use and what to do — or nil
// when err is no such refusal (or the rule's error carries no code). A handler returns it as it
// is: wrapped in "does not exist or cannot be read", the person would look for a file that is
// there, the real cause only in the error's cause.
func Refused(err error) *job.Error {
	if !errors.Is(err, ErrNotAllowed) {
		return nil
	}
	var e *job.Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
