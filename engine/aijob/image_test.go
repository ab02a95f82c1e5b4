package aijob_test

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/jpeg"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "jobdesk/engine/aijob"
	"jobdesk/engine/aijob/aitest"
	"jobdesk/engine/job"
)

// jpegBytes is a real JPEG image of w × h pixels.
func jpegBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, w, h)), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// hugePNG writes a real grayscale PNG of side × side pixels, all black, streamed row by row
// (its pixels compress to under a megabyte; decoded they would take side² bytes).
func hugePNG(t *testing.T, path string, side int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := func(typ string, data []byte) {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(data)))
		f.Write(n[:])
		crc := crc32.NewIEEE()
		io.WriteString(crc, typ)
		crc.Write(data)
		f.WriteString(typ)
		f.Write(data)
		binary.BigEndian.PutUint32(n[:], crc.Sum32())
		f.Write(n[:])
	}
	f.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(side))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(side))
	ihdr[8] = 8 // bit depth; colour type 0 (gray), deflate, filter 0, no interlace
	chunk("IHDR", ihdr)
	var idat bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&idat, zlib.BestSpeed)
	row := make([]byte, side+1) // filter byte 0, then the pixels
	for range side {
		zw.Write(row)
	}
	zw.Close()
	chunk("IDAT", idat.Bytes())
	chunk("IEND", nil)
}

// A 30000 × 30000 PNG of under a megabyte is refused from its header (E003, both languages,
// naming its size and the limit) before anything reaches the model; an image at the limit goes.
func TestCaptionRefusesHugeImage(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 30000 × 30000 PNG")
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "巨大.png")
	hugePNG(t, big, 30000)
	st, _ := os.Stat(big)
	if st.Size() > 2<<20 {
		t.Fatalf("the PNG takes %d bytes", st.Size())
	}
	srv := aitest.NewOpenAI(t, nil)
	s := newTestService(t, local(srv))
	_, err := s.Caption(withJob(1), mustJSON(FileInput{Path: big}), job.Discard)
	je := job.AsError(err)
	if je == nil || je.Code != job.E003 || je.Retryable || !strings.Contains(je.Message, "30000 × 30000 pixels") ||
		!strings.Contains(je.Message, "8000 pixels a side") || !strings.Contains(je.MessageJa, "一辺 8000 ピクセルまで") {
		t.Fatalf("err %+v", je)
	}
	if n := len(srv.Calls()); n != 0 {
		t.Fatalf("the model was called %d times", n)
	}
	edge := filepath.Join(dir, "edge.jpg")
	os.WriteFile(edge, jpegBytes(t, MaxImageSide, 4), 0o600)
	if _, err := s.Caption(withJob(2), mustJSON(FileInput{Path: edge}), job.Discard); err != nil || len(srv.Calls()) != 1 {
		t.Fatalf("an image at the limit: %v, %d calls", err, len(srv.Calls()))
	}
}
