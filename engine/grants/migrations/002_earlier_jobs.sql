-- The files of the jobs a person submitted before this table existed. JobDesk then read any
-- path, so it kept no grants; without these, a job still waiting at the upgrade, or an old one
-- retried, was refused as outside the folders JobDesk may use. Only the jobs a person started
-- (no parent) of the types that read the file a person chose are carried, never a workflow's
-- or an API caller's (flow.execution) paths. This reads the queue's jobs table: the queue's
-- migrations run before these (app.migrations).
INSERT INTO granted_files(path, granted_at)
	SELECT path, max(created_at) FROM (
		SELECT CASE WHEN json_valid(cast(input AS TEXT))
			THEN json_extract(cast(input AS TEXT), '$.path') END AS path, created_at
		FROM jobs
		WHERE parent_id IS NULL
			AND type IN ('csv', 'convert', 'checksum', 'CAPTION_GENERATION', 'ELIGIBILITY_EXTRACT')
			AND created_at < (SELECT applied_at FROM schema_migrations WHERE set_name = 'files' AND version = 1))
	WHERE typeof(path) = 'text' AND path <> ''
	GROUP BY path
	ON CONFLICT(path) DO NOTHING;
