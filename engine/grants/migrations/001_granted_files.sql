-- Files a person submitted (jobdesk run, a drop on the window): handlers and workflows may read
-- them although they lie outside the folders JobDesk may use. Times are Unix milliseconds.
CREATE TABLE granted_files (
	path       TEXT PRIMARY KEY,
	granted_at INTEGER NOT NULL
) WITHOUT ROWID;
