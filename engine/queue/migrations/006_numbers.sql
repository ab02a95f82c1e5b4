-- The number people know a job by (#12): the jobs a person started (those without a parent:
-- files dropped or run, goals, retries and "run again" copies) are numbered 1, 2, 3… in the
-- order they were submitted. The ids cannot serve: a workflow's task, wait and map-item jobs
-- take ids from the same sequence, so a person's jobs went #1, #2, #7, #15. Jobs with a parent
-- have no number. An insert takes max(number) + 1 inside its own write (one seek at the end
-- of this index), so concurrent submitters, in this process or another, neither collide nor
-- skip. The jobs already here are numbered in id order.
ALTER TABLE jobs ADD COLUMN number INTEGER;
UPDATE jobs SET number = numbered.n
	FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM jobs WHERE parent_id IS NULL) AS numbered
	WHERE jobs.id = numbered.id;
CREATE UNIQUE INDEX jobs_number ON jobs(number) WHERE number > 0;
