-- AI generation data: the 9×9 mandala chart (goal → 8 sub-goals → 8 actions each → tasks),
-- each row linked to the job that made it; model usage per call; the eligibility cache; local
-- notifications. Times are Unix milliseconds.
CREATE TABLE goals (
	id          INTEGER PRIMARY KEY,
	title       TEXT    NOT NULL,
	description TEXT    NOT NULL DEFAULT '',
	deadline    TEXT    NOT NULL DEFAULT '',
	status      TEXT    NOT NULL DEFAULT 'draft', -- draft | processing | active | partial | failed
	job_id      INTEGER,                          -- the job that created it
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL
);

CREATE TABLE subgoals (
	id          INTEGER PRIMARY KEY,
	goal_id     INTEGER NOT NULL REFERENCES goals(id) ON DELETE CASCADE,
	position    INTEGER NOT NULL CHECK (position BETWEEN 1 AND 8),
	title       TEXT    NOT NULL,
	description TEXT    NOT NULL DEFAULT '',
	background  TEXT    NOT NULL DEFAULT '',
	job_id      INTEGER,
	created_at  INTEGER NOT NULL,
	UNIQUE (goal_id, position)
);

CREATE TABLE goal_actions (
	id          INTEGER PRIMARY KEY,
	subgoal_id  INTEGER NOT NULL REFERENCES subgoals(id) ON DELETE CASCADE,
	position    INTEGER NOT NULL CHECK (position BETWEEN 1 AND 8),
	title       TEXT    NOT NULL,
	description TEXT    NOT NULL DEFAULT '',
	type        TEXT    NOT NULL CHECK (type IN ('execution', 'habit')),
	status      TEXT    NOT NULL DEFAULT 'pending', -- pending | done | failed (task generation)
	job_id      INTEGER,
	created_at  INTEGER NOT NULL,
	UNIQUE (subgoal_id, position)
);

CREATE TABLE goal_tasks (
	id                INTEGER PRIMARY KEY,
	action_id         INTEGER NOT NULL REFERENCES goal_actions(id) ON DELETE CASCADE,
	position          INTEGER NOT NULL,
	title             TEXT    NOT NULL,
	description       TEXT    NOT NULL DEFAULT '',
	type              TEXT    NOT NULL CHECK (type IN ('execution', 'habit')),
	estimated_minutes INTEGER NOT NULL,
	job_id            INTEGER,
	created_at        INTEGER NOT NULL,
	UNIQUE (action_id, position)
);

CREATE TABLE llm_usage (
	id                INTEGER PRIMARY KEY,
	job_id            INTEGER,
	purpose           TEXT    NOT NULL,
	provider          TEXT    NOT NULL,
	model             TEXT    NOT NULL,
	prompt_tokens     INTEGER NOT NULL DEFAULT 0,
	completion_tokens INTEGER NOT NULL DEFAULT 0,
	latency_ms        INTEGER NOT NULL DEFAULT 0,
	cost_usd          REAL,
	ok                INTEGER NOT NULL DEFAULT 1,
	created_at        INTEGER NOT NULL
);
CREATE INDEX llm_usage_job ON llm_usage(job_id);

CREATE TABLE eligibility_cache (
	content_hash TEXT    PRIMARY KEY,
	result       TEXT    NOT NULL,
	level        INTEGER NOT NULL,
	created_at   INTEGER NOT NULL
);

CREATE TABLE ai_notifications (
	id         INTEGER PRIMARY KEY,
	job_id     INTEGER,
	goal_id    INTEGER,
	level      TEXT    NOT NULL, -- partial | failed
	title      TEXT    NOT NULL,
	message    TEXT    NOT NULL,
	created_at INTEGER NOT NULL
);
