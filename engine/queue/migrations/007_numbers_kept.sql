-- The jobs that were here before numbers existed keep the number people knew them by. The
-- releases before migration 006 showed every job by its id (`jobdesk ls`, `show 21`, the
-- window's #21), and 006 counted the jobs without a parent afresh, so job 21 became #5 and
-- `show 21` named nothing, or later another job. Those jobs (created before 006 was applied)
-- now take their id as their number: a job a person started holds its id, any other job its
-- id negated, so it has no number and none of the old ids is ever given to another job. The
-- jobs numbered since 006 are moved up by the same step, so the magnitude of the column still
-- never falls as ids rise (see 006) and the next job is numbered after every old id.
UPDATE jobs SET number = CASE
		WHEN jobs.id <= old.cut THEN iif(jobs.parent_id IS NULL, jobs.id, -jobs.id)
		ELSE iif(jobs.number > 0, 1, -1) * (abs(jobs.number) - old.counted + old.cut)
	END
	FROM (SELECT last.cut AS cut, (SELECT abs(number) FROM jobs WHERE id = last.cut) AS counted
		FROM (SELECT max(id) AS cut FROM jobs WHERE created_at <
			(SELECT applied_at FROM schema_migrations WHERE set_name = 'queue' AND version = 6)) AS last
		WHERE last.cut IS NOT NULL) AS old;
