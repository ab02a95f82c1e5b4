package blob

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Local is the Store of this machine's files: URIs are absolute paths or file:// URIs. A
// relative path resolves under Root when Root is set, and is refused otherwise, so a handler
// never reads a file relative to whatever folder the process happens to run in.
type Local struct {
	// Root resolves relative paths (JobDesk sets the data folder); "" refuses them.
	Root string
	// Allow, when set, is asked about every path before anything touches it (open, create,
	// stat, list, remove, LocalPath); an error refuses the operation with a *PathError that
	// wraps it and matches ErrNotAllowed. Nil allows every path. AllowList.Check is one.
	Allow func(path string) error
}

// ErrNotAllowed is returned (wrapped) when Local.Allow refused a path; test with errors.Is.
var ErrNotAllowed = errors.New("blob: path not allowed")

// notAllowed carries Allow's own error (found by errors.As) and matches ErrNotAllowed.
type notAllowed struct{ err error }

func (n notAllowed) Error() string        { return n.err.Error() }
func (n notAllowed) Unwrap() error        { return n.err }
func (n notAllowed) Is(target error) bool { return target == ErrNotAllowed }

// Path returns the local path of uri, refused when Allow refuses it.
func (l Local) Path(uri string) (string, error) {
	p, err := l.path(uri)
	if err != nil {
		return "", err
	}
	if l.Allow != nil {
		if err := l.Allow(p); err != nil {
			return "", &PathError{Op: "access", URI: uri, Err: notAllowed{err}}
		}
	}
	return p, nil
}

func (l Local) path(uri string) (string, error) {
	p := uri
	if Scheme(uri) == "file" && strings.HasPrefix(strings.ToLower(uri), "file://") {
		u, err := url.Parse(uri)
		if err != nil {
			return "", &PathError{Op: "parse", URI: uri, Err: err}
		}
		p = filepath.FromSlash(u.Path)
	} else if Scheme(uri) != "file" {
		return "", &PathError{Op: "open", URI: uri, Err: ErrScheme}
	}
	if p == "" {
		return "", &PathError{Op: "open", URI: uri, Err: errors.New("empty path")}
	}
	if !filepath.IsAbs(p) {
		if l.Root == "" {
			return "", &PathError{Op: "open", URI: uri, Err: errors.New("relative path without a root folder")}
		}
		p = filepath.Join(l.Root, p)
	}
	return filepath.Clean(p), nil
}

func notExist(op, uri string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &PathError{Op: op, URI: uri, Err: errors.Join(ErrNotExist, err)}
	}
	return &PathError{Op: op, URI: uri, Err: err}
}

// Open implements Store.
func (l Local) Open(_ context.Context, uri string) (io.ReadCloser, error) {
	f, err := l.open(uri)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// open opens the file at uri for reading.
func (l Local) open(uri string) (*os.File, error) {
	p, err := l.Path(uri)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, notExist("open", uri, err)
	}
	return f, nil
}

type sectionReadCloser struct {
	*io.SectionReader
	f *os.File
}

func (s sectionReadCloser) Close() error { return s.f.Close() }

// OpenRange implements Store.
func (l Local) OpenRange(_ context.Context, uri string, offset, length int64) (io.ReadCloser, error) {
	f, err := l.open(uri)
	if err != nil {
		return nil, err
	}
	if length < 0 {
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, &PathError{Op: "stat", URI: uri, Err: err}
		}
		length = max(st.Size()-offset, 0)
	}
	return sectionReadCloser{io.NewSectionReader(f, offset, length), f}, nil
}

type localWriter struct {
	f    *os.File
	dst  string
	done bool
}

func (w *localWriter) Write(b []byte) (int, error) { return w.f.Write(b) }

func (w *localWriter) Commit() error {
	if w.done {
		return errors.New("blob: writer already finished")
	}
	w.done = true
	if err := w.f.Close(); err != nil {
		os.Remove(w.f.Name())
		return err
	}
	if err := os.Rename(w.f.Name(), w.dst); err != nil {
		os.Remove(w.f.Name())
		return err
	}
	return nil
}

func (w *localWriter) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.f.Close()
	return os.Remove(w.f.Name())
}

// Create implements Store. The object is written to a hidden temporary file beside it (mode
// 0600, folders made 0700 as needed) and renamed into place by Commit.
func (l Local) Create(_ context.Context, uri string) (Writer, error) {
	p, err := l.Path(uri)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, &PathError{Op: "create", URI: uri, Err: err}
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(p)+".*.tmp")
	if err != nil {
		return nil, &PathError{Op: "create", URI: uri, Err: err}
	}
	return &localWriter{f: f, dst: p}, nil
}

// Stat implements Store.
func (l Local) Stat(_ context.Context, uri string) (Info, error) {
	p, err := l.Path(uri)
	if err != nil {
		return Info{}, err
	}
	st, err := os.Stat(p)
	if err != nil {
		return Info{}, notExist("stat", uri, err)
	}
	if st.IsDir() {
		return Info{}, &PathError{Op: "stat", URI: uri, Err: errors.Join(ErrNotExist, errors.New("is a folder"))}
	}
	return Info{URI: uri, Size: st.Size(), ModTime: st.ModTime()}, nil
}

// List implements Store: the regular files under prefix's folder whose path starts with the
// prefix, skipping the temporary files of writes in progress. URIs come back in the form of the
// prefix (a path, or a file:// URI).
func (l Local) List(_ context.Context, prefix string) ([]Info, error) {
	p, err := l.Path(prefix)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(prefix, "/") || strings.HasSuffix(prefix, string(filepath.Separator)) {
		p += string(filepath.Separator)
	}
	root := p
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root = filepath.Dir(p)
	}
	toURI := func(path string) string {
		if strings.HasPrefix(strings.ToLower(prefix), "file://") {
			return "file://" + filepath.ToSlash(path)
		}
		if !filepath.IsAbs(prefix) && l.Root != "" {
			if rel, err := filepath.Rel(l.Root, path); err == nil {
				return rel
			}
		}
		return path
	}
	var out []Info
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() {
			if path != root && !strings.HasPrefix(path+string(filepath.Separator), p) && !strings.HasPrefix(p, path+string(filepath.Separator)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasPrefix(path, p) || strings.HasSuffix(d.Name(), ".tmp") && strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		st, err := d.Info()
		if err != nil {
			return nil // removed while listing
		}
		out = append(out, Info{URI: toURI(path), Size: st.Size(), ModTime: st.ModTime()})
		return nil
	})
	if err != nil {
		return nil, &PathError{Op: "list", URI: prefix, Err: err}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URI < out[j].URI })
	return out, nil
}

// Remove implements Store.
func (l Local) Remove(_ context.Context, uri string) error {
	p, err := l.Path(uri)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &PathError{Op: "remove", URI: uri, Err: err}
	}
	return nil
}

// LocalPath returns a path on this machine holding uri's bytes, and a function to call when done
// with it. A local URI is its own path (nothing is copied); any other is downloaded into a
// temporary file under tmpDir ("" for the system's), which release removes. Handlers whose
// readers need a real file (PDF, XLSX) use it; the cloud worker's downloads land in /tmp.
func LocalPath(ctx context.Context, s Store, uri, tmpDir string) (path string, release func(), err error) {
	if Scheme(uri) == "file" {
		if l, ok := localOf(s); ok {
			p, err := l.Path(uri)
			if err != nil {
				return "", nil, err
			}
			if _, err := os.Stat(p); err != nil {
				return "", nil, notExist("open", uri, err)
			}
			return p, func() {}, nil
		}
	}
	r, err := s.Open(ctx, uri)
	if err != nil {
		return "", nil, err
	}
	defer r.Close()
	name := uri[strings.LastIndexAny(uri, `/\`)+1:]
	f, err := os.CreateTemp(tmpDir, "jobdesk-*-"+sanitize(name))
	if err != nil {
		return "", nil, &PathError{Op: "download", URI: uri, Err: err}
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", nil, &PathError{Op: "download", URI: uri, Err: err}
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", nil, &PathError{Op: "download", URI: uri, Err: err}
	}
	return f.Name(), func() { os.Remove(f.Name()) }, nil
}

// localOf finds the Local store behind s (s itself, or a Mux's file store).
func localOf(s Store) (Local, bool) {
	switch v := s.(type) {
	case Local:
		return v, true
	case *Local:
		return *v, true
	case *Mux:
		return localOf(v.stores["file"])
	}
	return Local{}, false
}

// sanitize keeps a file name usable as the tail of a temporary file's name.
func sanitize(name string) string {
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == '*' || r < ' ' {
			return '_'
		}
		return r
	}, name)
	if len(name) > 100 {
		name = name[len(name)-100:]
	}
	return name
}
