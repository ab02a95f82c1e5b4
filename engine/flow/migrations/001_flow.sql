-- Workflow engine (engine/flow). Times are Unix milliseconds.
CREATE TABLE flow_state_machines (
	arn        TEXT PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	definition TEXT NOT NULL,
	role_arn   TEXT NOT NULL DEFAULT '',
	type       TEXT NOT NULL DEFAULT 'STANDARD',
	status     TEXT NOT NULL DEFAULT 'ACTIVE',
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);

CREATE TABLE flow_executions (
	id            INTEGER PRIMARY KEY,
	arn           TEXT NOT NULL UNIQUE,
	name          TEXT NOT NULL,
	sm_arn        TEXT NOT NULL,
	definition    TEXT NOT NULL,
	job_id        INTEGER NOT NULL DEFAULT 0,
	status        TEXT NOT NULL,
	input         TEXT NOT NULL,
	output        TEXT,
	error         TEXT NOT NULL DEFAULT '',
	cause         TEXT NOT NULL DEFAULT '',
	start_date    INTEGER NOT NULL,
	stop_date     INTEGER,
	redrive_count INTEGER NOT NULL DEFAULT 0,
	retry_of      TEXT NOT NULL DEFAULT '',
	map_run_arn   TEXT NOT NULL DEFAULT '',
	checkpoint    TEXT,
	last_event_id INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX flow_executions_sm ON flow_executions(sm_arn, id);
CREATE INDEX flow_executions_job ON flow_executions(job_id);

CREATE TABLE flow_history (
	exec_id  INTEGER NOT NULL,
	event_id INTEGER NOT NULL,
	prev_id  INTEGER NOT NULL,
	type     TEXT NOT NULL,
	at       INTEGER NOT NULL,
	details  TEXT NOT NULL,
	PRIMARY KEY (exec_id, event_id)
) WITHOUT ROWID;

-- One row per finished Map iteration, so a resumed execution skips it.
CREATE TABLE flow_map_items (
	exec_id INTEGER NOT NULL,
	map_key TEXT NOT NULL,
	idx     INTEGER NOT NULL,
	ok      INTEGER NOT NULL,
	output  TEXT NOT NULL,
	PRIMARY KEY (exec_id, map_key, idx)
) WITHOUT ROWID;

CREATE TABLE flow_map_runs (
	arn             TEXT PRIMARY KEY,
	exec_id         INTEGER NOT NULL,
	map_key         TEXT NOT NULL,
	status          TEXT NOT NULL,
	max_concurrency INTEGER NOT NULL,
	tolerated_pct   REAL NOT NULL,
	tolerated_count INTEGER NOT NULL,
	start_date      INTEGER NOT NULL,
	stop_date       INTEGER,
	total           INTEGER NOT NULL DEFAULT 0,
	pending         INTEGER NOT NULL DEFAULT 0,
	running         INTEGER NOT NULL DEFAULT 0,
	succeeded       INTEGER NOT NULL DEFAULT 0,
	failed          INTEGER NOT NULL DEFAULT 0,
	timed_out       INTEGER NOT NULL DEFAULT 0,
	aborted         INTEGER NOT NULL DEFAULT 0,
	results_written INTEGER NOT NULL DEFAULT 0,
	UNIQUE (exec_id, map_key)
);

CREATE TABLE flow_activities (
	arn        TEXT PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	created_at INTEGER NOT NULL
);

-- Activity tasks waiting for (or served to) an external worker.
CREATE TABLE flow_activity_tasks (
	token        TEXT PRIMARY KEY,
	activity_arn TEXT NOT NULL,
	exec_id      INTEGER NOT NULL,
	task_key     TEXT NOT NULL UNIQUE,
	input        TEXT NOT NULL,
	status       TEXT NOT NULL, -- SCHEDULED, STARTED, SUCCEEDED, FAILED
	worker       TEXT NOT NULL DEFAULT '',
	output       TEXT,
	error        TEXT NOT NULL DEFAULT '',
	cause        TEXT NOT NULL DEFAULT '',
	created_at   INTEGER NOT NULL,
	heartbeat_at INTEGER
);
CREATE INDEX flow_activity_tasks_ready ON flow_activity_tasks(activity_arn, status, created_at);

-- Notifications published by arn:aws:states:::sns:publish tasks.
CREATE TABLE flow_notifications (
	id        INTEGER PRIMARY KEY,
	exec_id   INTEGER NOT NULL,
	task_key  TEXT NOT NULL UNIQUE,
	topic_arn TEXT NOT NULL DEFAULT '',
	subject   TEXT NOT NULL DEFAULT '',
	message   TEXT NOT NULL,
	at        INTEGER NOT NULL
);
