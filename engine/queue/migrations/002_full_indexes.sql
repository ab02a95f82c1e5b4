-- Partial indexes whose condition is "column IS NOT NULL" make SQLite's planner compare every
-- bound value of a query on jobs with that condition, and a statement planned that way is
-- re-prepared whenever a binding changes (the lease's "now", a completion's token): every
-- cached statement was parsed again on each use. Plain indexes serve the same queries.
DROP INDEX jobs_parent;
DROP INDEX jobs_completed;
CREATE INDEX jobs_parent ON jobs(parent_id);
CREATE INDEX jobs_completed ON jobs(completed_at);
