-- source_order: the place of the CSV job that set a user's values in the order jobs were
-- submitted (the job's id; a retry keeps its job and so its place). An import writes a user only
-- when it is not older than the one that set the values, so the last submitted file wins however
-- the imports overlap, crash or are retried. Rows written before: 0, older than every job.
ALTER TABLE csv_users ADD COLUMN source_order INTEGER NOT NULL DEFAULT 0;
