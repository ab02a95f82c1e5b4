-- A file dropped twice is now found by the queue's dedup key (the same for every job family),
-- so the CSV family's own record of submissions goes.
DROP TABLE csv_submissions;
