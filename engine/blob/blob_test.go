package blob

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLocalRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := NewMux(Local{Root: dir})
	for _, uri := range []string{
		filepath.Join(dir, "a", "b.txt"),
		"file://" + filepath.ToSlash(filepath.Join(dir, "a", "c.txt")),
		"rel/d.txt",
	} {
		if err := WriteAll(ctx, s, uri, []byte("こんにちは "+uri)); err != nil {
			t.Fatalf("WriteAll(%s): %v", uri, err)
		}
		got, err := ReadAll(ctx, s, uri)
		if err != nil || string(got) != "こんにちは "+uri {
			t.Fatalf("ReadAll(%s) = %q, %v", uri, got, err)
		}
		st, err := s.Stat(ctx, uri)
		if err != nil || st.Size != int64(len("こんにちは "+uri)) {
			t.Fatalf("Stat(%s) = %+v, %v", uri, st, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "rel", "d.txt")); err != nil {
		t.Fatalf("relative URI did not resolve under the root: %v", err)
	}
	r, err := s.OpenRange(ctx, filepath.Join(dir, "a", "b.txt"), 6, 6)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	if string(b) != "にち" {
		t.Fatalf("OpenRange = %q", b)
	}
	list, err := s.List(ctx, filepath.Join(dir, "a")+"/")
	if err != nil || len(list) != 2 || !strings.HasSuffix(list[0].URI, "b.txt") || !strings.HasSuffix(list[1].URI, "c.txt") {
		t.Fatalf("List = %+v, %v", list, err)
	}
	list, _ = s.List(ctx, filepath.Join(dir, "a", "c"))
	if len(list) != 1 {
		t.Fatalf("List by name prefix = %+v", list)
	}
	if err := s.Remove(ctx, filepath.Join(dir, "a", "b.txt")); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(ctx, filepath.Join(dir, "a", "b.txt")); err != nil {
		t.Fatalf("removing a missing object: %v", err)
	}
	if _, err := s.Stat(ctx, filepath.Join(dir, "a", "b.txt")); !errors.Is(err, ErrNotExist) {
		t.Fatalf("Stat of a removed object = %v, want ErrNotExist", err)
	}
}

func TestCreateIsAtomic(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := Local{}
	uri := filepath.Join(dir, "out.md")
	if err := WriteAll(ctx, s, uri, []byte("old")); err != nil {
		t.Fatal(err)
	}
	w, err := s.Create(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("new, half written"))
	if got, _ := ReadAll(ctx, s, uri); string(got) != "old" {
		t.Fatalf("before Commit a reader saw %q", got)
	}
	if l, _ := s.List(ctx, dir+"/"); len(l) != 1 {
		t.Fatalf("List shows a write in progress: %+v", l)
	}
	w.Abort()
	if got, _ := ReadAll(ctx, s, uri); string(got) != "old" {
		t.Fatalf("after Abort = %q", got)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("Abort left %d files", len(ents))
	}
}

func TestRefusals(t *testing.T) {
	ctx := context.Background()
	if _, err := (Local{}).Open(ctx, "relative.txt"); err == nil {
		t.Fatal("a relative path without a root was opened")
	}
	if _, err := NewMux(Local{}).Open(ctx, "s3://bucket/key"); !errors.Is(err, ErrScheme) {
		t.Fatalf("s3 without an S3 store = %v", err)
	}
	if _, err := (Local{}).Open(ctx, filepath.Join(t.TempDir(), "missing")); !errors.Is(err, ErrNotExist) {
		t.Fatalf("missing file = %v", err)
	}
}

func TestSchemeAndJoin(t *testing.T) {
	for _, c := range []struct{ uri, scheme string }{
		{"s3://b/k", "s3"}, {"S3://b/k", "s3"}, {"file:///a", "file"}, {"/a/b://c", "file"}, {`C:\x`, "file"},
	} {
		if got := Scheme(c.uri); got != c.scheme {
			t.Errorf("Scheme(%q) = %q, want %q", c.uri, got, c.scheme)
		}
	}
	if got := Join("s3://b/p/", "/results/", "7", "x.md"); got != "s3://b/p/results/7/x.md" {
		t.Errorf("Join = %q", got)
	}
}

func TestLocalPath(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := filepath.Join(dir, "x.pdf")
	os.WriteFile(p, []byte("%PDF"), 0o600)
	got, release, err := LocalPath(ctx, NewMux(Local{}), p, "")
	if err != nil || got != p {
		t.Fatalf("LocalPath of a local file = %q, %v", got, err)
	}
	release()
	if _, err := os.Stat(p); err != nil {
		t.Fatal("release removed the user's own file")
	}
}
