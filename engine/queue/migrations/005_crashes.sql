-- How many times a job was running in a process that died (a crash, a kill -9, a power cut).
-- A job that keeps killing the process running it fails at Options.PoisonLimit instead of
-- being received again by every restart for ever; a death does not count as an attempt,
-- because the job may be innocent (it merely ran beside the job that crashed).
ALTER TABLE jobs ADD COLUMN crashes INTEGER NOT NULL DEFAULT 0;
