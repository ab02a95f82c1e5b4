package blob_test

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"jobdesk/engine/blob"
)

func TestSHA256(t *testing.T) {
	ctx := context.Background()
	// FIPS 180-2's example: SHA-256("abc"), read a byte at a time.
	sum, n, err := blob.SHA256(ctx, iotest.OneByteReader(strings.NewReader("abc")))
	if err != nil || n != 3 || hex.EncodeToString(sum) != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("SHA256(abc) = %x, %d, %v", sum, n, err)
	}
	// More than one buffer.
	big := strings.Repeat("a", 1_000_000*3)
	sum, n, err = blob.SHA256(ctx, strings.NewReader(big))
	if err != nil || n != int64(len(big)) || len(sum) != 32 {
		t.Fatalf("SHA256(3 MB) = %x, %d, %v", sum, n, err)
	}

	broken := errors.New("disk gone")
	if _, _, err := blob.SHA256(ctx, iotest.ErrReader(broken)); err != broken || blob.Cancelled(ctx, err) {
		t.Fatalf("a failing read: %v (cancelled %v), want the read's error", err, blob.Cancelled(ctx, err))
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := blob.SHA256(cctx, strings.NewReader(big)); !errors.Is(err, context.Canceled) || !blob.Cancelled(cctx, err) {
		t.Fatalf("a cancelled hash: %v, want context.Canceled", err)
	}
}
