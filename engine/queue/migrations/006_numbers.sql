-- The number people know a job by (#12). The jobs a person started (those without a parent:
-- files dropped or run, goals, retries and "run again" copies) are numbered 1, 2, 3… in the
-- order they were submitted; the ids could not serve, because a workflow's task, wait and
-- map-item jobs take ids from the same sequence, so a person's jobs went #1, #2, #7, #15.
--
-- The column is a running count along the ids: a job a person started holds its number
-- (> 0); any other job holds the newest number at its insert, negated (<= 0), so it has no
-- number of its own. Its magnitude never falls as ids rise, which gives what an index on it
-- would give without writing one (an index cost every enqueue one more b-tree page, about 15 %
-- of a single enqueue): the next number is the last row's magnitude + 1, read by the insert
-- itself inside its own write (so concurrent submitters, in this process or another, neither
-- collide nor skip), and the job with number n is found by a binary search over the ids
-- (Queue.GetByNumber). The jobs already here are counted in id order.
ALTER TABLE jobs ADD COLUMN number INTEGER NOT NULL DEFAULT 0;
UPDATE jobs SET number = iif(jobs.parent_id IS NULL, counted.n, -counted.n)
	FROM (SELECT id, sum(parent_id IS NULL) OVER (ORDER BY id) AS n FROM jobs) AS counted
	WHERE jobs.id = counted.id;
