package dispatch

import (
	"context"
	"encoding/hex"
	"os"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
)

// fileSHA256 is the hex SHA-256 of the file at path, read until ctx ends.
func fileSHA256(ctx context.Context, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", job.Wrap(job.E014, err, path+" does not exist or cannot be read").
			WithJa(path + " が見つからないか、読み取れません。").Permanent()
	}
	defer f.Close()
	sum, _, err := blob.SHA256(ctx, f)
	if blob.Cancelled(ctx, err) {
		return "", err
	}
	if err != nil {
		return "", job.Wrap(job.E014, err, path+" could not be read").WithJa(path + " を読み取れません。").Permanent()
	}
	return hex.EncodeToString(sum), nil
}
