package docsqlite

import (
	"context"
	"database/sql"
	"encoding/json"

	"jobdesk/engine/docjob"
)

// ApplyCloudResult records a conversion that ran in the cloud as if it had run on this device:
// res (its Markdown already brought into the data folder, res.OutputPath naming it there) is
// stored under k for job jobID, so converting the same bytes here again reuses it. It is
// idempotent: applying the same result again writes nothing (the row keeps its time and job).
func (c *Cache) ApplyCloudResult(ctx context.Context, jobID int64, k docjob.Key, res docjob.Result) error {
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return c.DB.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO docjob_results
			(sha256, version, options, name, status, result, output_path, job_id, created_at) VALUES (?,?,?,?,?,?,?,?,?)
			ON CONFLICT (sha256, version, options) DO UPDATE SET name = excluded.name, status = excluded.status,
			result = excluded.result, output_path = excluded.output_path, job_id = excluded.job_id, created_at = excluded.created_at
			WHERE docjob_results.result IS NOT excluded.result OR docjob_results.job_id IS NOT excluded.job_id`,
			k.SHA256, k.Version, k.Options, res.Name, string(res.Status), string(b), res.OutputPath, jobID, c.stamp())
		return err
	})
}
