package csvjob

import (
	"bufio"
	"context"
	"io"

	"golang.org/x/text/transform"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
)

// transcodeUTF16 writes a UTF-8 copy of a UTF-16 file (BOM dropped) to the object dst of bs,
// streaming, so the byte reader can split it like any other file. Memory stays at the copy
// buffers.
func transcodeUTF16(ctx context.Context, bs blob.Store, f io.ReadSeeker, enc, dst string) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return job.Wrap(job.E004, err, "cannot read the file").WithName("ValidationError")
	}
	out, err := bs.Create(ctx, dst)
	if err != nil {
		return job.Wrap(job.E009, err, "cannot write the converted copy").WithJa("変換したコピーを書き込めません。")
	}
	defer out.Abort()
	w := bufio.NewWriterSize(out, 1<<20)
	r := transform.NewReader(bufio.NewReaderSize(f, 1<<20), decoderFor(enc).NewDecoder())
	buf := make([]byte, 1<<20)
	for {
		if err := ctx.Err(); err != nil {
			return cancelled(err)
		}
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return job.Wrap(job.E009, werr, "cannot write the converted copy").WithJa("変換したコピーを書き込めません。")
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return validationError(job.E006, "the file is not valid "+enc+": "+err.Error(),
				"ファイルが正しい "+enc+" ではありません。")
		}
	}
	if err := w.Flush(); err != nil {
		return job.Wrap(job.E009, err, "cannot write the converted copy").WithJa("変換したコピーを書き込めません。")
	}
	if err := out.Commit(); err != nil {
		return job.Wrap(job.E009, err, "cannot write the converted copy").WithJa("変換したコピーを書き込めません。")
	}
	return nil
}
