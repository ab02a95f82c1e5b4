// Package blob is where JobDesk's handlers read their inputs and write their results: a small
// object store addressed by URI, so the same handler reads a file on this PC or an object in S3
// without knowing which. A URI is an absolute local path ("/home/u/a.csv"), a file URI
// ("file:///home/u/a.csv") or an S3 URI ("s3://bucket/key"). The local implementation lives
// here; the S3 one lives under sync/ (the only place that talks to AWS) and is plugged into a Mux
// with Mux.Handle("s3", …).
//
// Writes are atomic: Create returns a Writer whose bytes become visible under the URI only when
// Commit succeeds, so a reader never sees half a result, and a crash leaves either the old object
// or the new one. Listing is by prefix, as in S3: "dir/part" lists "dir/part-1" and "dir/part/x".
package blob

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"
)

// ErrNotExist is returned (wrapped) when the object does not exist; test with errors.Is.
var ErrNotExist = errors.New("blob: object does not exist")

// Info describes one object.
type Info struct {
	URI     string    // the object's URI, in the scheme it was asked for
	Size    int64     // bytes
	ModTime time.Time // last write
}

// Writer receives an object's bytes. Nothing is visible under the URI until Commit returns nil;
// Abort (or a failed Commit) discards what was written. Calling Abort after Commit does nothing,
// so `defer w.Abort()` is always safe.
type Writer interface {
	io.Writer
	Commit() error
	Abort() error
}

// Store is a blob store. Every method takes a URI in a scheme the store serves.
type Store interface {
	// Open reads a whole object.
	Open(ctx context.Context, uri string) (io.ReadCloser, error)
	// OpenRange reads length bytes from offset (length < 0: to the end).
	OpenRange(ctx context.Context, uri string, offset, length int64) (io.ReadCloser, error)
	// Create starts writing an object, replacing any object of the same URI at Commit.
	Create(ctx context.Context, uri string) (Writer, error)
	// Stat describes an object; ErrNotExist when there is none.
	Stat(ctx context.Context, uri string) (Info, error)
	// List returns the objects whose URI starts with prefix, in lexical order.
	List(ctx context.Context, prefix string) ([]Info, error)
	// Remove deletes an object; removing a missing object is not an error.
	Remove(ctx context.Context, uri string) error
}

// Scheme returns the scheme of uri: "s3" for "s3://b/k", "file" for "file:///p" and for a
// plain path.
func Scheme(uri string) string {
	if i := strings.Index(uri, "://"); i > 0 && !strings.ContainsAny(uri[:i], `/\`) {
		return strings.ToLower(uri[:i])
	}
	return "file"
}

// Join appends slash-separated name parts to a URI prefix, as path.Join does for the key part
// (local paths use the OS separator: see Local).
func Join(prefix string, parts ...string) string {
	s := prefix
	for _, p := range parts {
		p = strings.Trim(p, "/")
		if p == "" {
			continue
		}
		if s != "" && !strings.HasSuffix(s, "/") && !strings.HasSuffix(s, `\`) {
			s += "/"
		}
		s += p
	}
	return s
}

// ReadAll returns a whole object.
func ReadAll(ctx context.Context, s Store, uri string) ([]byte, error) {
	r, err := s.Open(ctx, uri)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// WriteAll writes data as one object, atomically.
func WriteAll(ctx context.Context, s Store, uri string, data []byte) error {
	w, err := s.Create(ctx, uri)
	if err != nil {
		return err
	}
	defer w.Abort()
	if _, err := w.Write(data); err != nil {
		return err
	}
	return w.Commit()
}

// Copy writes what r yields as one object, atomically, and returns the bytes written.
func Copy(ctx context.Context, s Store, uri string, r io.Reader) (int64, error) {
	w, err := s.Create(ctx, uri)
	if err != nil {
		return 0, err
	}
	defer w.Abort()
	n, err := io.Copy(w, r)
	if err != nil {
		return n, err
	}
	return n, w.Commit()
}

// Mux serves several schemes through one Store: "file" by the local store it was made with,
// others by the stores given to Handle. The zero Mux is not usable; use NewMux.
type Mux struct {
	stores map[string]Store
}

// NewMux returns a Mux that serves local paths and file URIs with local.
func NewMux(local Store) *Mux { return &Mux{stores: map[string]Store{"file": local}} }

// Handle serves scheme (e.g. "s3") with s.
func (m *Mux) Handle(scheme string, s Store) { m.stores[strings.ToLower(scheme)] = s }

// Serves reports whether the Mux has a store for uri's scheme.
func (m *Mux) Serves(uri string) bool { _, ok := m.stores[Scheme(uri)]; return ok }

// ErrScheme is returned (wrapped) for a URI whose scheme no store serves.
var ErrScheme = errors.New("blob: no store for this URI scheme")

func (m *Mux) store(uri string) (Store, error) {
	s, ok := m.stores[Scheme(uri)]
	if !ok {
		return nil, &PathError{Op: "open", URI: uri, Err: ErrScheme}
	}
	return s, nil
}

// Open implements Store.
func (m *Mux) Open(ctx context.Context, uri string) (io.ReadCloser, error) {
	s, err := m.store(uri)
	if err != nil {
		return nil, err
	}
	return s.Open(ctx, uri)
}

// OpenRange implements Store.
func (m *Mux) OpenRange(ctx context.Context, uri string, offset, length int64) (io.ReadCloser, error) {
	s, err := m.store(uri)
	if err != nil {
		return nil, err
	}
	return s.OpenRange(ctx, uri, offset, length)
}

// Create implements Store.
func (m *Mux) Create(ctx context.Context, uri string) (Writer, error) {
	s, err := m.store(uri)
	if err != nil {
		return nil, err
	}
	return s.Create(ctx, uri)
}

// Stat implements Store.
func (m *Mux) Stat(ctx context.Context, uri string) (Info, error) {
	s, err := m.store(uri)
	if err != nil {
		return Info{}, err
	}
	return s.Stat(ctx, uri)
}

// List implements Store.
func (m *Mux) List(ctx context.Context, prefix string) ([]Info, error) {
	s, err := m.store(prefix)
	if err != nil {
		return nil, err
	}
	return s.List(ctx, prefix)
}

// Remove implements Store.
func (m *Mux) Remove(ctx context.Context, uri string) error {
	s, err := m.store(uri)
	if err != nil {
		return err
	}
	return s.Remove(ctx, uri)
}

// PathError records a failed operation on a URI.
type PathError struct {
	Op  string
	URI string
	Err error
}

func (e *PathError) Error() string { return "blob " + e.Op + " " + e.URI + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *PathError) Unwrap() error { return e.Err }
