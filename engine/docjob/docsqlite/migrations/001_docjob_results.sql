-- Converted documents, keyed by the input's SHA-256, the converter version and the options that
-- change the Markdown. Converting the same bytes again with the same version reuses the row
-- (seed 003, Job B: hash comparison, skip unless force).
CREATE TABLE docjob_results (
    sha256      TEXT    NOT NULL,
    version     TEXT    NOT NULL,
    options     TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    status      TEXT    NOT NULL CHECK (status IN ('ready', 'partial', 'failed')),
    result      TEXT    NOT NULL, -- the Result JSON (or the *job.Error JSON when failed)
    output_path TEXT    NOT NULL DEFAULT '',
    job_id      INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT    NOT NULL,
    PRIMARY KEY (sha256, version, options)
);
CREATE INDEX docjob_results_job ON docjob_results (job_id);
