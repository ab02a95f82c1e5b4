package csvsqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"jobdesk/engine/job"
)

// Export formats.
const (
	FormatXLSX = "xlsx"
	FormatCSV  = "csv"
)

// Export copies a CSV job's result file to out: format FormatXLSX (the report workbook) or
// FormatCSV (the errors CSV). ref is the queue job id or the execution name. It serves
// `jobdesk export ID --format xlsx|csv -o FILE`.
func (s *Store) Export(ctx context.Context, ref, format, out string) error {
	if format != FormatXLSX && format != FormatCSV {
		return job.Errorf(job.E014, "unknown export format %q (use xlsx or csv)", format).
			WithJa(fmt.Sprintf("出力形式 %q は使えません（xlsx か csv）。", format))
	}
	var csvPath, xlsxPath string
	q := `SELECT errors_csv, report_xlsx FROM csv_imports WHERE execution=? ORDER BY created_at DESC LIMIT 1`
	arg := any(ref)
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil {
		q = `SELECT errors_csv, report_xlsx FROM csv_imports WHERE job_id=? ORDER BY created_at DESC LIMIT 1`
		arg = id
	}
	err := s.DB.R.QueryRowContext(ctx, q, arg).Scan(&csvPath, &xlsxPath)
	if errors.Is(err, sql.ErrNoRows) {
		return job.Errorf(job.E014, "no CSV job results for %s", ref).WithJa(fmt.Sprintf("%s のCSVジョブの結果はありません。", ref))
	}
	if err != nil {
		return dbError(err, "read results")
	}
	src := xlsxPath
	if format == FormatCSV {
		src = csvPath
	}
	if src == "" {
		return job.Errorf(job.E014, "job %s has no result files (it failed validation)", ref).
			WithJa(fmt.Sprintf("ジョブ %s には結果ファイルがありません（検証に失敗しました）。", ref))
	}
	in, err := os.Open(src)
	if err != nil {
		return job.Wrap(job.E004, err, "the result file "+filepath.Base(src)+" is gone").WithJa("結果ファイルが見つかりません。")
	}
	defer in.Close()
	if dir := filepath.Dir(out); dir != "" {
		os.MkdirAll(dir, 0o755)
	}
	tmp := out + ".tmp"
	o, err := os.Create(tmp)
	if err != nil {
		return job.Wrap(job.E014, err, "cannot write "+out).WithJa(out + " に書き込めません。")
	}
	if _, err := io.Copy(o, in); err != nil {
		o.Close()
		os.Remove(tmp)
		return job.Wrap(job.E014, err, "cannot write "+out).WithJa(out + " に書き込めません。")
	}
	if err := o.Close(); err != nil {
		os.Remove(tmp)
		return job.Wrap(job.E014, err, "cannot write "+out).WithJa(out + " に書き込めません。")
	}
	return os.Rename(tmp, out)
}
