-- The durable job queue. Times are Unix milliseconds.
CREATE TABLE jobs (
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
	dedup_key        TEXT UNIQUE,
	parent_id        INTEGER,
	retry_of         INTEGER,
	created_at       INTEGER NOT NULL,
	started_at       INTEGER,
	updated_at       INTEGER NOT NULL,
	completed_at     INTEGER
);
CREATE INDEX jobs_ready ON jobs(priority DESC, run_at, id) WHERE status IN ('PENDING', 'RETRYING');
CREATE INDEX jobs_leased ON jobs(lease_until) WHERE status = 'RUNNING';
CREATE INDEX jobs_parent ON jobs(parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX jobs_completed ON jobs(completed_at) WHERE completed_at IS NOT NULL;
CREATE INDEX jobs_status_type ON jobs(status, type);

-- History: one row per status change, written by the trigger below so that no code path can
-- change a status without leaving a trace. Progress-only updates are not history.
CREATE TABLE job_events (
	id       INTEGER PRIMARY KEY,
	job_id   INTEGER NOT NULL,
	at       INTEGER NOT NULL,
	kind     TEXT    NOT NULL,
	status   TEXT    NOT NULL,
	progress REAL    NOT NULL DEFAULT 0,
	message  TEXT    NOT NULL DEFAULT '',
	detail   TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX job_events_job ON job_events(job_id, id);

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

-- Processes that lease jobs, so a restarted engine can tell at once that a lease's owner died.
CREATE TABLE queue_owners (
	id         TEXT PRIMARY KEY,
	pid        INTEGER NOT NULL,
	host       TEXT    NOT NULL,
	started_at INTEGER NOT NULL
);
