package cloudjobs

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"

	"jobdesk/engine/blob"
	"jobdesk/engine/csvjob"
	"jobdesk/engine/csvjob/csvsqlite"
	"jobdesk/engine/docjob"
	"jobdesk/engine/docjob/docsqlite"
	"jobdesk/engine/job"
	"jobdesk/sync/dispatch"
)

// Results come home: when a cloud job ends, its result objects are downloaded into the data
// folder under the same names and places as a device run of the job writes them (each download
// atomic, so a reader never sees half a file), and only then applied to SQLite in one
// transaction, idempotently by job: a job resumed after a kill -9 between the two steps
// downloads again and applies once.

// download copies the object src into the local file dst.
func download(ctx context.Context, c *dispatch.Cloud, src, dst string) error {
	rc, err := c.Blobs.Open(ctx, src)
	if err != nil {
		return err
	}
	defer rc.Close()
	if _, err := blob.Copy(ctx, blob.Local{}, dst, rc); err != nil {
		var pe *blob.PathError
		if errors.As(err, &pe) && pe.URI == dst {
			return job.Wrap(job.E009, err, "cannot write "+dst).WithJa(dst + " に書き込めません。").Transient()
		}
		return job.Wrap(job.E010, err, "the download of "+src+" was interrupted").
			WithJa(src + " のダウンロードが中断されました。").Transient()
	}
	return nil
}

// homeCSV brings a CSV execution's results home: errors.csv and report.xlsx into
// DATA/csv/<execution>/ as on the device, then the users (users.json) and the csv_imports row
// applied in one transaction (csvsqlite.ApplyCloudResult). It returns the Summary as a device
// run records it: the local file and result paths, the users changed on this device.
func (d HandlerSet) homeCSV(ctx context.Context, c *dispatch.Cloud, jobID int64, path string, sum csvjob.Summary) (csvjob.Summary, error) {
	dir := blob.Join(d.DataDir, "csv", sum.ExecutionID)
	local := sum
	local.Source = absPath(path)
	local.ErrorsCSV, local.ReportXLSX = "", ""
	for _, f := range []struct{ from, to *string }{{&sum.ErrorsCSV, &local.ErrorsCSV}, {&sum.ReportXLSX, &local.ReportXLSX}} {
		if *f.from == "" {
			continue
		}
		dst := blob.Join(dir, filepath.Base(*f.from))
		if err := download(ctx, c, *f.from, dst); err != nil {
			return sum, err
		}
		*f.to = dst
	}
	if local.ReportXLSX != "" {
		out := csvjob.ObjectOf(local.ReportXLSX)
		local.OutputBucket, local.OutputKey = out.Bucket, out.Key
	}
	var users io.Reader
	if sum.UsersFile != "" {
		rc, err := c.Blobs.Open(ctx, sum.UsersFile)
		if err != nil {
			return sum, err
		}
		defer rc.Close()
		users = rc
	}
	return csvsqlite.New(d.DB).ApplyCloudResult(ctx, jobID, local, users)
}

// homeCSVFailure records a CSV execution that failed in the cloud as the device's
// ERROR_HANDLING does: its failure record (failure.json, when the cloud wrote one) in
// csv_imports.
func (d HandlerSet) homeCSVFailure(ctx context.Context, c *dispatch.Cloud, jobID int64, path, execution string) error {
	b, err := blob.ReadAll(ctx, c.Blobs, blob.Join(Results(c.Config), "csv", execution, csvjob.FailureFile))
	if errors.Is(err, blob.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return csvsqlite.New(d.DB).ApplyCloudFailure(ctx, jobID, execution, absPath(path), json.RawMessage(b))
}

// homeDoc brings a conversion home: its Markdown into DATA/documents/ under the name the device
// gives it, then the result stored in the device's conversion cache (docsqlite), so the same
// bytes converted here later reuse it. It returns the Result as a device run gives it.
func (d HandlerSet) homeDoc(ctx context.Context, c *dispatch.Cloud, jobID int64, in docjob.Input, res docjob.Result) (docjob.Result, error) {
	res.Path = in.Path
	if res.OutputPath != "" && res.Status != docjob.StatusFailed {
		dst := blob.Join(d.DataDir, "documents", filepath.Base(res.OutputPath))
		if err := download(ctx, c, res.OutputPath, dst); err != nil {
			return res, err
		}
		res.OutputPath = dst
	}
	if res.SHA256 != "" {
		if err := docsqlite.New(d.DB).ApplyCloudResult(ctx, jobID, docjob.CacheKey(res.SHA256, in), res); err != nil {
			return res, job.Wrap(job.E009, err, "the conversion could not be recorded").
				WithJa("変換結果をデータベースに記録できませんでした。").Transient()
		}
	}
	return res, nil
}
