-- The status index holds only the jobs not yet ended (PENDING, RETRYING, RUNNING: the statuses
-- from PENDING to RUNNING in text order): the reads that seek it (when the next job of a type
-- falls due, an unfinished job of a type, the queue's depth) ask only for those, and repeat the
-- condition literally so that the planner may use it. An ended job leaves the index instead of
-- moving to another place in it: finishing a job wrote an entry that nothing read (a Map of
-- 10,000 items wrote 10,000), and a long history made the index as large as the table. Reads
-- of ended jobs by status (the window's list filtered by status, the counts per status) read
-- the table, as they did through this index, which held neither the parent nor the name they
-- also test.
DROP INDEX jobs_status_type;
CREATE INDEX jobs_status_type ON jobs(status, type, target, run_at) WHERE status >= 'PENDING' AND status <= 'RUNNING';
