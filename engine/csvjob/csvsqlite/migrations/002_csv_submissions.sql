-- csv_submissions: which queue job was started for which file contents (SHA-256), so dropping the
-- same file twice finds the earlier job instead of running it again (unless forced).
CREATE TABLE csv_submissions (
    sha256     TEXT NOT NULL,
    job_id     INTEGER NOT NULL,
    source     TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (sha256, job_id)
) WITHOUT ROWID;
