package blob

import (
	"context"
	"crypto/sha256"
	"io"
)

// hashBuf is how much SHA256 reads at a time.
const hashBuf = 1 << 20

// SHA256 is JobDesk's one file hasher: it reads r to its end and returns the SHA-256 of what it
// read and how many bytes that was — a dropped file's identity, the content address of an
// upload. It stops between two reads when ctx ends, returning ctx.Err() itself; a read error is
// returned as it is, so each caller words it for its own reader.
func SHA256(ctx context.Context, r io.Reader) (sum []byte, n int64, err error) {
	h := sha256.New()
	buf := make([]byte, hashBuf)
	for {
		if err := ctx.Err(); err != nil {
			return nil, n, err
		}
		m, err := r.Read(buf)
		h.Write(buf[:m])
		n += int64(m)
		if err == io.EOF {
			return h.Sum(nil), n, nil
		}
		if err != nil {
			return nil, n, err
		}
	}
}

// Cancelled reports whether err, from SHA256 (or any read that stops when ctx ends), is ctx's
// own error: the read was stopped rather than failed.
func Cancelled(ctx context.Context, err error) bool {
	cerr := ctx.Err()
	return cerr != nil && err == cerr
}
