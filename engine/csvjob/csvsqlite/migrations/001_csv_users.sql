-- csv_users: each user's counts as of the latest CSV file that listed the user.
-- A re-run of the same file changes no row (the upsert only writes changed values).
CREATE TABLE csv_users (
    user_id       TEXT PRIMARY KEY,
    login_count   INTEGER NOT NULL,
    post_count    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL, -- unix milliseconds of the change
    source_job    TEXT NOT NULL,    -- execution name of the CSV job that set the values
    source_sha256 TEXT NOT NULL     -- SHA-256 of that file
) WITHOUT ROWID;

-- csv_stage: one row per processed chunk until the aggregation merges them. A retried chunk
-- replaces its row, so retries never count rows twice.
CREATE TABLE csv_stage (
    execution  TEXT NOT NULL,
    chunk      INTEGER NOT NULL,
    data       BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (execution, chunk)
) WITHOUT ROWID;

-- csv_imports: one row per CSV execution with its outcome and result files.
CREATE TABLE csv_imports (
    execution     TEXT PRIMARY KEY,
    job_id        INTEGER NOT NULL DEFAULT 0,
    source        TEXT NOT NULL,
    sha256        TEXT NOT NULL DEFAULT '',
    status        TEXT NOT NULL,
    rows_total    INTEGER NOT NULL DEFAULT 0,
    rows_ok       INTEGER NOT NULL DEFAULT 0,
    rows_failed   INTEGER NOT NULL DEFAULT 0,
    users         INTEGER NOT NULL DEFAULT 0,
    users_changed INTEGER NOT NULL DEFAULT 0,
    errors_csv    TEXT NOT NULL DEFAULT '',
    report_xlsx   TEXT NOT NULL DEFAULT '',
    summary       TEXT NOT NULL DEFAULT '{}',
    created_at    INTEGER NOT NULL
);
CREATE INDEX csv_imports_job ON csv_imports(job_id);
CREATE INDEX csv_imports_sha ON csv_imports(sha256);

-- csv_audit: AUDIT_LOGGING records (seed: SUCCESS / BUSINESS_ERROR / SYSTEM_ERROR).
CREATE TABLE csv_audit (
    id         INTEGER PRIMARY KEY,
    execution  TEXT NOT NULL,
    item_index INTEGER NOT NULL,
    log_type   TEXT NOT NULL,
    line       INTEGER NOT NULL DEFAULT 0,
    rows_ok    INTEGER NOT NULL DEFAULT 0,
    rows_failed INTEGER NOT NULL DEFAULT 0,
    detail     TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL
);
CREATE INDEX csv_audit_execution ON csv_audit(execution, item_index);
