package dispatch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"

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
	h := sha256.New()
	buf := make([]byte, 1<<20)
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		n, err := f.Read(buf)
		h.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", job.Wrap(job.E014, err, path+" could not be read").WithJa(path + " を読み取れません。").Permanent()
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
