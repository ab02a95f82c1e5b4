// Package oledrop owns JobDesk's OLE drop target on Windows: the part of drag and drop that
// GLFW (and so Fyne) does not do. Fyne sees only Explorer's ordinary files (CF_HDROP through
// WM_DROPFILES); an attachment dragged out of an Outlook mail is a virtual file that exists only
// as a stream the source hands over during the drop (CFSTR_FILEDESCRIPTORW for the names,
// CFSTR_FILECONTENTS for the bytes). Register puts an IDropTarget, written in Go over
// golang.org/x/sys/windows, on a window: it takes CF_HDROP as Explorer gives it and writes
// virtual files into a folder of their own, then hands the paths to the window's drop handler.
//
// The byte-level parts (the FILEGROUPDESCRIPTORW layout, safe file names, bounded writing) are
// plain Go and build everywhere, so they are tested on Linux too; the COM part is Windows-only.
package oledrop

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// FileDescriptor is one entry of a FILEGROUPDESCRIPTORW: a file the drag source offers.
type FileDescriptor struct {
	Name     string    // as the source names it; may hold a relative folder ("a\b.txt")
	Size     int64     // valid when HasSize
	HasSize  bool      // the source gave the size (FD_FILESIZE)
	Dir      bool      // a folder entry (FD_ATTRIBUTES with FILE_ATTRIBUTE_DIRECTORY)
	Modified time.Time // zero unless the source gave it (FD_WRITESTIME)
}

// The FILEDESCRIPTORW layout (shlobj_core.h): dwFlags, clsid, sizel, pointl, dwFileAttributes,
// three FILETIMEs, nFileSizeHigh, nFileSizeLow, WCHAR cFileName[MAX_PATH]; 4-byte aligned, so
// the entries start right after FILEGROUPDESCRIPTORW's cItems.
const (
	descriptorSize   = 592
	offAttributes    = 36
	offLastWrite     = 56
	offSizeHigh      = 64
	offSizeLow       = 68
	offName          = 72
	maxPath          = 260
	fdAttributes     = 0x04
	fdWritesTime     = 0x20
	fdFileSize       = 0x40
	attrDirectory    = 0x10
	filetimeUnixDiff = 116444736000000000 // 100 ns intervals from 1601 to 1970
)

// ParseFileGroupDescriptorW reads the FILEGROUPDESCRIPTORW a drag source gives for
// CFSTR_FILEDESCRIPTORW. b may be longer than the entries (GlobalSize rounds up); an entry
// count the bytes cannot hold is an error, never a read past the end.
func ParseFileGroupDescriptorW(b []byte) ([]FileDescriptor, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("file group descriptor of %d bytes", len(b))
	}
	n := binary.LittleEndian.Uint32(b)
	if room := uint64(len(b)-4) / descriptorSize; uint64(n) > room {
		return nil, fmt.Errorf("file group descriptor names %d files but holds %d", n, room)
	}
	out := make([]FileDescriptor, 0, n)
	for i := 0; i < int(n); i++ {
		e := b[4+i*descriptorSize : 4+(i+1)*descriptorSize]
		flags := binary.LittleEndian.Uint32(e)
		d := FileDescriptor{Name: utf16Name(e[offName : offName+2*maxPath])}
		if flags&fdAttributes != 0 {
			d.Dir = binary.LittleEndian.Uint32(e[offAttributes:])&attrDirectory != 0
		}
		if flags&fdFileSize != 0 {
			size := uint64(binary.LittleEndian.Uint32(e[offSizeHigh:]))<<32 | uint64(binary.LittleEndian.Uint32(e[offSizeLow:]))
			if size <= 1<<62 {
				d.Size, d.HasSize = int64(size), true
			}
		}
		if flags&fdWritesTime != 0 {
			if ft := binary.LittleEndian.Uint64(e[offLastWrite:]); ft > filetimeUnixDiff {
				d.Modified = time.Unix(0, 0).Add(time.Duration(ft-filetimeUnixDiff) * 100)
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// utf16Name decodes a NUL-terminated little-endian UTF-16 name (lone surrogates become U+FFFD).
func utf16Name(b []byte) string {
	u := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		c := binary.LittleEndian.Uint16(b[i:])
		if c == 0 {
			break
		}
		u = append(u, c)
	}
	return string(utf16.Decode(u))
}

// maxNameBytes bounds a written file's name: Windows allows 255 UTF-16 units per component and
// Linux 255 bytes; 200 bytes of UTF-8 fits both with room for " (2)".
const maxNameBytes = 200

// SafeName is name as a file name that is safe in one folder on Windows and elsewhere: its last
// component only (a source may name "folder\file"), without control characters or the
// characters Windows refuses (<>:"/\|?*), without trailing dots and spaces, not a device name
// (CON, NUL, COM1 …), at most 200 bytes with the extension kept, and never empty.
func SafeName(name string) string {
	if i := strings.LastIndexAny(name, `\/`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(`<>:"|?*`, r) {
			return '_'
		}
		return r
	}, strings.ToValidUTF8(name, "_"))
	name = strings.TrimLeft(strings.TrimRight(name, ". "), " ")
	if name == "" {
		return "attachment"
	}
	stem, ext := name, filepath.Ext(name)
	if len(ext) > 16 || ext == name {
		ext = ""
	}
	stem = strings.TrimSuffix(name, ext)
	if reservedName(stem) {
		stem = "_" + stem
	}
	if len(stem)+len(ext) > maxNameBytes {
		stem = cutUTF8(stem, maxNameBytes-len(ext))
	}
	return stem + ext
}

// reservedName reports whether stem (the name without its extension) is a Windows device name.
func reservedName(stem string) bool {
	s := strings.ToUpper(strings.TrimRight(stem, " "))
	switch s {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	return len(s) == 4 && (strings.HasPrefix(s, "COM") || strings.HasPrefix(s, "LPT")) && s[3] >= '0' && s[3] <= '9'
}

// cutUTF8 shortens s to at most n bytes without splitting a character.
func cutUTF8(s string, n int) string {
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// Limits bounds what one drop may write, so that a drag source cannot fill the disk.
type Limits struct {
	MaxFiles    int   // files per drop
	MaxFileSize int64 // bytes per file
	MaxTotal    int64 // bytes per drop
}

// DefaultLimits: more than any mail's attachments, far less than a disk.
var DefaultLimits = Limits{MaxFiles: 100, MaxFileSize: 1 << 30, MaxTotal: 4 << 30}

// TooLargeError is a virtual file that was not written because of a Limits bound.
type TooLargeError struct {
	Name  string // the file's safe name ("" when the drop has too many files)
	Limit int64  // the bound it passed: bytes, or files when Name is ""
}

func (e *TooLargeError) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("a drop of more than %d files", e.Limit)
	}
	return fmt.Sprintf("%s is larger than %d bytes", e.Name, e.Limit)
}

// Save writes the files of one drop into a new folder under dir (made if missing), each under
// its SafeName (made unique within the drop), reading file i's bytes from open(i). A file that
// fails (it cannot be read, or it passes a bound of lim) is left out and its error joined into
// the returned error; the paths of the files written are returned in any case. Folder entries
// are skipped.
func Save(dir string, files []FileDescriptor, open func(i int) (io.ReadCloser, error), lim Limits) ([]string, error) {
	var paths []string
	var errs []error
	var folder string
	var total int64
	used := map[string]bool{}
	for i, f := range files {
		if f.Dir {
			continue
		}
		name := uniqueName(SafeName(f.Name), used)
		if len(paths) == lim.MaxFiles {
			errs = append(errs, &TooLargeError{Limit: int64(lim.MaxFiles)})
			break
		}
		room := min(lim.MaxFileSize, lim.MaxTotal-total)
		if f.HasSize && f.Size > room {
			errs = append(errs, &TooLargeError{Name: name, Limit: room})
			continue
		}
		if folder == "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
			var err error
			if folder, err = os.MkdirTemp(dir, "drop-"+time.Now().Format("20060102-150405")+"-"); err != nil {
				return nil, err
			}
		}
		path := filepath.Join(folder, name)
		n, err := saveOne(path, func() (io.ReadCloser, error) { return open(i) }, room)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		if !f.Modified.IsZero() {
			_ = os.Chtimes(path, f.Modified, f.Modified) // the mail's time is a courtesy, not a need
		}
		total += n
		paths = append(paths, path)
	}
	return paths, errors.Join(errs...)
}

// saveOne copies at most limit bytes from the reader open gives into a new file at path; a longer
// stream removes the file and fails with TooLargeError.
func saveOne(path string, open func() (io.ReadCloser, error), limit int64) (int64, error) {
	r, err := open()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(w, io.LimitReader(r, limit+1))
	if err == nil && n > limit {
		err = &TooLargeError{Name: filepath.Base(path), Limit: limit}
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return 0, err
	}
	return n, nil
}

// uniqueName is name, or "stem (2).ext" and so on when the drop already used it (compared
// without case, as Windows does).
func uniqueName(name string, used map[string]bool) string {
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 2; used[strings.ToLower(name)]; i++ {
		name = fmt.Sprintf("%s (%d)%s", stem, i, ext)
	}
	used[strings.ToLower(name)] = true
	return name
}
