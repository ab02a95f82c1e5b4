-- Enqueue writes every index of jobs, so only what a fresh job needs stays indexed for it:
-- the parent, completion and dedup indexes become partial and skip the NULLs every new
-- top-level job has (three fewer b-tree inserts per job). Their conditions are range terms
-- ("> 0", "> ''") that queries repeat literally, never "IS NOT NULL" (see 002). The UNIQUE
-- constraint on dedup_key lived in the table definition, so the table is rebuilt once.
CREATE TABLE jobs_rebuilt (
	id               INTEGER PRIMARY KEY,
	type             TEXT    NOT NULL,
	name             TEXT    NOT NULL DEFAULT '',
	status           TEXT    NOT NULL,
	priority         INTEGER NOT NULL DEFAULT 0,
	target           TEXT    NOT NULL DEFAULT 'device',
	input            BLOB,
	result           BLOB,
	error            TEXT,
	progress         REAL    NOT NULL DEFAULT 0,
	message          TEXT    NOT NULL DEFAULT '',
	attempts         INTEGER NOT NULL DEFAULT 0,
	max_attempts     INTEGER NOT NULL DEFAULT 3,
	receives         INTEGER NOT NULL DEFAULT 0,
	run_at           INTEGER NOT NULL,
	lease_token      TEXT,
	lease_until      INTEGER,
	lease_owner      TEXT,
	cancel_requested INTEGER NOT NULL DEFAULT 0,
	dedup_key        TEXT,
	parent_id        INTEGER,
	retry_of         INTEGER,
	created_at       INTEGER NOT NULL,
	started_at       INTEGER,
	updated_at       INTEGER NOT NULL,
	completed_at     INTEGER
);
INSERT INTO jobs_rebuilt SELECT id, type, name, status, priority, target, input, result, error, progress,
	message, attempts, max_attempts, receives, run_at, lease_token, lease_until, lease_owner,
	cancel_requested, dedup_key, parent_id, retry_of, created_at, started_at, updated_at, completed_at
	FROM jobs;
DROP TABLE jobs;
ALTER TABLE jobs_rebuilt RENAME TO jobs;

CREATE INDEX jobs_ready ON jobs(priority DESC, run_at, id) WHERE status IN ('PENDING', 'RETRYING');
CREATE INDEX jobs_leased ON jobs(lease_until) WHERE status = 'RUNNING';
CREATE INDEX jobs_status_type ON jobs(status, type);
CREATE INDEX jobs_parent ON jobs(parent_id) WHERE parent_id > 0;
CREATE INDEX jobs_completed ON jobs(completed_at) WHERE completed_at > 0;
CREATE UNIQUE INDEX jobs_dedup ON jobs(dedup_key) WHERE dedup_key > '';

CREATE TRIGGER jobs_history AFTER UPDATE OF status ON jobs
WHEN old.status IS NOT new.status
BEGIN
	INSERT INTO job_events(job_id, at, kind, status, progress, message, detail)
	VALUES (new.id, new.updated_at,
		CASE new.status
			WHEN 'RUNNING'   THEN 'TaskStarted'
			WHEN 'RETRYING'  THEN 'TaskRetryScheduled'
			WHEN 'SUCCEEDED' THEN 'TaskSucceeded'
			WHEN 'PARTIAL'   THEN 'TaskSucceeded'
			WHEN 'FAILED'    THEN 'TaskFailed'
			WHEN 'TIMED_OUT' THEN 'TaskTimedOut'
			WHEN 'CANCELLED' THEN 'ExecutionAborted'
			WHEN 'PENDING'   THEN CASE old.status WHEN 'RUNNING' THEN 'TaskLeaseReleased' ELSE 'ExecutionRedriven' END
			ELSE 'StatusChanged'
		END,
		new.status, new.progress, new.message, coalesce(new.error, ''));
END;
