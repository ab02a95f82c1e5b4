-- Cloud results applied: one row per AI job whose results came home from the cloud, written in
-- the same transaction as the rows it brought, so a result applied twice changes nothing.
CREATE TABLE ai_cloud_results (
	job_id     INTEGER PRIMARY KEY,
	applied_at INTEGER NOT NULL
);
