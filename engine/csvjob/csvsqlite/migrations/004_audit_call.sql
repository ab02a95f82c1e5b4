-- call_key names the AUDIT_LOGGING call that wrote a record: a call delivered again (the worker was
-- stopped after it wrote and before the workflow recorded it) replaces its records instead of
-- adding them twice. '' (records written before): never replaced.
ALTER TABLE csv_audit ADD COLUMN call_key TEXT NOT NULL DEFAULT '';
CREATE INDEX csv_audit_call ON csv_audit(execution, call_key) WHERE call_key > '';
