-- When a worker has nothing due, it asks when the next job of each type it handles falls due.
-- With status and type alone indexed, that read every waiting job of those types on each pass
-- of the dispatcher (quadratic for a large queue); with target and run_at after them, min(run_at)
-- per status and type is one index seek. Queries on status and type use the longer index alike.
DROP INDEX jobs_status_type;
CREATE INDEX jobs_status_type ON jobs(status, type, target, run_at);
