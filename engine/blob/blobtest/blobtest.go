// Package blobtest is a blob.Store in memory for tests: mounted for a scheme other than the
// local one (a stand-in for S3), it shows code working where there is no local disk at all, and
// that what the code read and wrote went through the store it was given.
package blobtest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"jobdesk/engine/blob"
)

// Mem is a blob.Store in memory, for any scheme; objects are keyed by their whole URI.
type Mem struct {
	mu      sync.Mutex
	objects map[string]object
	open    int // writers created and neither committed nor aborted
}

type object struct {
	data []byte
	mod  time.Time
}

var _ blob.Store = (*Mem)(nil)

// NewMem returns an empty store.
func NewMem() *Mem { return &Mem{objects: map[string]object{}} }

// Get returns the bytes of the object at uri, and whether there is one.
func (m *Mem) Get(uri string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objects[uri]
	return o.data, ok
}

// Put stores b at uri at once, as a write by someone else would.
func (m *Mem) Put(uri string, b []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objects[uri] = object{data: bytes.Clone(b), mod: time.Now()}
}

// OpenWriters returns how many writers were created and neither committed nor aborted.
func (m *Mem) OpenWriters() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.open
}

func (m *Mem) Open(_ context.Context, uri string) (io.ReadCloser, error) {
	b, ok := m.Get(uri)
	if !ok {
		return nil, &blob.PathError{Op: "open", URI: uri, Err: blob.ErrNotExist}
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

func (m *Mem) OpenRange(_ context.Context, uri string, offset, length int64) (io.ReadCloser, error) {
	b, ok := m.Get(uri)
	if !ok {
		return nil, &blob.PathError{Op: "open", URI: uri, Err: blob.ErrNotExist}
	}
	b = b[min(offset, int64(len(b))):]
	if length >= 0 && length < int64(len(b)) {
		b = b[:length]
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

func (m *Mem) Create(_ context.Context, uri string) (blob.Writer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.open++
	return &memWriter{m: m, uri: uri}, nil
}

func (m *Mem) Stat(_ context.Context, uri string) (blob.Info, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objects[uri]
	if !ok {
		return blob.Info{}, &blob.PathError{Op: "stat", URI: uri, Err: blob.ErrNotExist}
	}
	return blob.Info{URI: uri, Size: int64(len(o.data)), ModTime: o.mod}, nil
}

func (m *Mem) List(_ context.Context, prefix string) ([]blob.Info, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []blob.Info
	for uri, o := range m.objects {
		if strings.HasPrefix(uri, prefix) {
			out = append(out, blob.Info{URI: uri, Size: int64(len(o.data)), ModTime: o.mod})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URI < out[j].URI })
	return out, nil
}

func (m *Mem) Remove(_ context.Context, uri string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objects, uri)
	return nil
}

// memWriter collects an object's bytes; Commit stores them whole.
type memWriter struct {
	m    *Mem
	uri  string
	buf  bytes.Buffer
	done bool
}

func (w *memWriter) Write(b []byte) (int, error) { return w.buf.Write(b) }

func (w *memWriter) Commit() error {
	if w.done {
		return errors.New("already finished")
	}
	w.done = true
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	w.m.objects[w.uri] = object{data: bytes.Clone(w.buf.Bytes()), mod: time.Now()}
	w.m.open--
	return nil
}

func (w *memWriter) Abort() error {
	if !w.done {
		w.done = true
		w.m.mu.Lock()
		w.m.open--
		w.m.mu.Unlock()
	}
	return nil
}
