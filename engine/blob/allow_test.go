package blob_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"jobdesk/engine/blob"
)

type refused struct{ path string }

func (r *refused) Error() string { return r.path + " is outside the allowed folders" }

// TestAllowListConfinesLocal: a Local store with an AllowList reads and writes inside its
// folders only; every operation on a path outside (directly, by "..", or through a symbolic
// link) is refused before the file is touched, with the rule's own error.
func TestAllowListConfinesLocal(t *testing.T) {
	ctx := context.Background()
	data, extra, outside := t.TempDir(), t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret.csv")
	os.WriteFile(secret, []byte("password,hunter2\n"), 0o600)
	chosen := filepath.Join(outside, "chosen.csv")
	os.WriteFile(chosen, []byte("a,b\n"), 0o600)
	os.WriteFile(filepath.Join(data, "in.csv"), []byte("x\n"), 0o600)
	os.WriteFile(filepath.Join(data, "own.db"), []byte("db"), 0o600)
	os.Symlink(secret, filepath.Join(data, "link.csv"))
	os.Symlink(outside, filepath.Join(data, "linkdir"))
	folders := []string{data}
	rule := blob.AllowList{
		Folders: func() []string { return folders },
		Deny:    []string{filepath.Join(data, "own.db")},
		File:    func(p string) bool { return p == chosen },
		Refuse:  func(p string) error { return &refused{p} },
	}
	s := blob.Local{Root: data, Allow: rule.Check}

	if b, err := blob.ReadAll(ctx, s, "in.csv"); err != nil || string(b) != "x\n" {
		t.Fatalf("inside: %q %v", b, err)
	}
	if b, err := blob.ReadAll(ctx, s, chosen); err != nil || string(b) != "a,b\n" {
		t.Fatalf("a chosen file: %q %v", b, err)
	}
	if err := blob.WriteAll(ctx, s, filepath.Join(data, "out", "r.md"), []byte("ok")); err != nil {
		t.Fatalf("writing inside: %v", err)
	}
	bad := []string{secret, "file://" + secret, filepath.Join(data, "..", filepath.Base(outside), "secret.csv"), "../" + filepath.Base(outside) + "/secret.csv",
		filepath.Join(data, "link.csv"), filepath.Join(data, "linkdir", "secret.csv"), filepath.Join(data, "own.db"), "/etc/shadow"}
	for _, uri := range bad {
		_, err := blob.ReadAll(ctx, s, uri)
		var r *refused
		if !errors.Is(err, blob.ErrNotAllowed) || !errors.As(err, &r) {
			t.Errorf("read %s: %v", uri, err)
		}
		if _, err := s.Stat(ctx, uri); !errors.Is(err, blob.ErrNotAllowed) {
			t.Errorf("stat %s: %v", uri, err)
		}
		if _, err := s.OpenRange(ctx, uri, 0, 4); !errors.Is(err, blob.ErrNotAllowed) {
			t.Errorf("range %s: %v", uri, err)
		}
		if _, _, err := blob.LocalPath(ctx, blob.NewMux(s), uri, ""); !errors.Is(err, blob.ErrNotAllowed) {
			t.Errorf("local path %s: %v", uri, err)
		}
	}
	for _, uri := range []string{filepath.Join(outside, "new.md"), filepath.Join(data, "linkdir", "new.md"), filepath.Join(data, "own.db")} {
		if err := blob.WriteAll(ctx, s, uri, []byte("x")); !errors.Is(err, blob.ErrNotAllowed) {
			t.Errorf("write %s: %v", uri, err)
		}
		if err := s.Remove(ctx, uri); !errors.Is(err, blob.ErrNotAllowed) {
			t.Errorf("remove %s: %v", uri, err)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "new.md")); err == nil {
		t.Errorf("a file was written outside")
	}
	if b, _ := os.ReadFile(filepath.Join(data, "own.db")); string(b) != "db" {
		t.Errorf("a denied file changed: %q", b)
	}
	if _, err := s.List(ctx, outside+"/"); !errors.Is(err, blob.ErrNotAllowed) {
		t.Errorf("list outside: %v", err)
	}
	// A folder added later is allowed at once.
	folders = append(folders, extra)
	if err := blob.WriteAll(ctx, s, filepath.Join(extra, "r.md"), []byte("ok")); err != nil {
		t.Errorf("an added folder: %v", err)
	}
}
