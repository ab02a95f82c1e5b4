package blob

import (
	"fmt"

	"jobdesk/engine/job"
)

// InUse reports whether err says a file could not be read because another program holds it
// open without sharing it: on Windows, Excel keeps the workbook (and a CSV) it shows locked,
// and opening it fails with a sharing or lock violation. The file itself is fine; it can be
// read once the other program closes it. Outside Windows, where locks are advisory, it is
// always false.
func InUse(err error) bool { return err != nil && lockedByOther(err) }

// InUseError is the job error for a file another program holds open: E014 (the file cannot be
// had now; nothing is wrong with it), retryable, asking to close it — a retry after that
// succeeds. name is the file as the user knows it.
func InUseError(name string, err error) *job.Error {
	return job.Wrap(job.E014, err, fmt.Sprintf("%s is open in another program (Excel?); close it there and retry", name)).
		WithJa(fmt.Sprintf("%s は別のプログラム（Excel など）で開かれています。そのプログラムで閉じてから再試行してください。", name)).
		WithName("FileInUse").Transient()
}
