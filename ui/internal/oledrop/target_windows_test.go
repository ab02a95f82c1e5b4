package oledrop

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf16"
	"unsafe"

	"golang.org/x/sys/windows"
)

// These tests play the drag source: a data object made in Go, offering what Outlook offers for
// dragged attachments (or what Explorer offers for files), handed to the Target through its
// IDropTarget vtable as OLE would. They run under Wine in `make test-windows`.

var (
	procCreateStreamOnHGlobal = ole32.NewProc("CreateStreamOnHGlobal")
	procGlobalAlloc           = kernel32.NewProc("GlobalAlloc")
	procCreateWindowExW       = user32.NewProc("CreateWindowExW")
	procDestroyWindow         = user32.NewProc("DestroyWindow")
	procFindWindowW           = user32.NewProc("FindWindowW")
	procGetPropW              = user32.NewProc("GetPropW")
)

const (
	eNotImpl      = 0x80004001
	dvEFormatEtc  = 0x80040064
	methodWrite   = 4 // IStream (ISequentialStream::Write)
	dropEffectAll = 1 | 2 | 4
	// IDropTarget's methods after IUnknown's three
	methodDragEnter, methodDragOver, methodDragLeave, methodDrop = 3, 4, 5, 6
)

// virtualFile is one file the fake source offers through FILECONTENTS.
type virtualFile struct {
	desc   testFile
	data   []byte
	stream bool // TYMED_ISTREAM (as Outlook gives attachments), else TYMED_HGLOBAL
}

// fakeSource is an IDataObject: virtual files, or Explorer's paths as CF_HDROP.
type fakeSource struct {
	com   uintptr
	files []virtualFile
	hdrop []string
	refs  int32
	asked []uint16 // formats GetData was asked for
}

var (
	fakesMu sync.Mutex
	fakes   = map[uintptr]*fakeSource{}
)

func fake(this uintptr) *fakeSource {
	fakesMu.Lock()
	defer fakesMu.Unlock()
	return fakes[this]
}

var fakeVtbl = func() (v [12]uintptr) {
	notImpl := syscall.NewCallback(func(this, a, b, c uintptr) uintptr { return eNotImpl })
	for i := range v {
		v[i] = notImpl
	}
	v[0] = syscall.NewCallback(func(this, riid, ppv uintptr) uintptr {
		*(*uintptr)(ptr(ppv)) = 0
		return eNoInterface
	})
	v[1] = syscall.NewCallback(func(this uintptr) uintptr { f := fake(this); f.refs++; return uintptr(f.refs) })
	v[2] = syscall.NewCallback(func(this uintptr) uintptr { f := fake(this); f.refs--; return uintptr(f.refs) })
	v[methodGetData] = syscall.NewCallback(func(this, format, medium uintptr) uintptr {
		return fake(this).getData(*(*formatEtc)(ptr(format)), (*stgMedium)(ptr(medium)))
	})
	v[methodQueryGetData] = syscall.NewCallback(func(this, format uintptr) uintptr {
		f := *(*formatEtc)(ptr(format))
		if fake(this).offers(f.cfFormat) && f.tymed&tymedHGlobal != 0 {
			return sOK
		}
		return dvEFormatEtc
	})
	return v
}()

func newFakeSource(t *testing.T, s *fakeSource) *fakeSource {
	com, err := windows.LocalAlloc(windows.LMEM_FIXED, uint32(unsafe.Sizeof(uintptr(0))))
	if err != nil {
		t.Fatal(err)
	}
	*(*uintptr)(ptr(com)) = uintptr(unsafe.Pointer(&fakeVtbl))
	s.com, s.refs = com, 1
	fakesMu.Lock()
	fakes[com] = s
	fakesMu.Unlock()
	t.Cleanup(func() {
		fakesMu.Lock()
		delete(fakes, com)
		fakesMu.Unlock()
		windows.LocalFree(windows.Handle(com))
	})
	return s
}

func (s *fakeSource) offers(cf uint16) bool {
	if s.hdrop != nil {
		return cf == cfHDROP
	}
	return s.files != nil && (cf == cfDescriptor || cf == cfContents)
}

func (s *fakeSource) getData(f formatEtc, m *stgMedium) uintptr {
	s.asked = append(s.asked, f.cfFormat)
	switch {
	case !s.offers(f.cfFormat):
		return dvEFormatEtc
	case f.cfFormat == cfHDROP:
		*m = stgMedium{tymed: tymedHGlobal, handle: globalFrom(dropFiles(s.hdrop))}
	case f.cfFormat == cfDescriptor:
		descs := make([]testFile, len(s.files))
		for i, v := range s.files {
			descs[i] = v.desc
		}
		*m = stgMedium{tymed: tymedHGlobal, handle: globalFrom(fileGroupDescriptorW(descs...))}
	default: // FILECONTENTS
		if f.lindex < 0 || int(f.lindex) >= len(s.files) {
			return dvEFormatEtc
		}
		v := s.files[f.lindex]
		if !v.stream {
			*m = stgMedium{tymed: tymedHGlobal, handle: globalFrom(v.data)}
			return sOK
		}
		var stm uintptr
		if r, _, _ := procCreateStreamOnHGlobal.Call(0, 1, uintptr(unsafe.Pointer(&stm))); r != sOK {
			return r
		}
		var n uint32
		comCall(stm, methodWrite, uintptr(unsafe.Pointer(&v.data[0])), uintptr(len(v.data)), uintptr(unsafe.Pointer(&n)))
		// Left at its end on purpose: the Target seeks to the start, as real sources need.
		*m = stgMedium{tymed: tymedIStream, handle: stm}
	}
	return sOK
}

// globalFrom copies b into a new movable HGLOBAL (ReleaseStgMedium frees it).
func globalFrom(b []byte) uintptr {
	h, _, _ := procGlobalAlloc.Call(0x0002, uintptr(len(b))) // GMEM_MOVEABLE
	p, _, _ := procGlobalLock.Call(h)
	copy(unsafe.Slice((*byte)(ptr(p)), len(b)), b)
	procGlobalUnlock.Call(h)
	return h
}

// dropFiles is a DROPFILES block with wide paths, as Explorer puts in CF_HDROP.
func dropFiles(paths []string) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, [5]uint32{20, 0, 0, 0, 1}) // pFiles, pt, fNC, fWide
	for _, p := range paths {
		binary.Write(&b, binary.LittleEndian, append(utf16.Encode([]rune(p)), 0))
	}
	binary.Write(&b, binary.LittleEndian, uint16(0))
	return b.Bytes()
}

// drop is what one drag does to the target: DragEnter, DragOver and Drop (or DragLeave when
// it was not accepted), through the vtable. It returns the effects DragEnter and Drop gave.
func drop(t *testing.T, target *Target, src *fakeSource) (enter, dropped uint32) {
	t.Helper()
	obj := target.IDropTarget()
	enter = dropEffectAll
	if r := comCall(obj, methodDragEnter, src.com, 0, 0, uintptr(unsafe.Pointer(&enter))); r != sOK {
		t.Fatalf("DragEnter: %#x", r)
	}
	over := uint32(dropEffectAll)
	if r := comCall(obj, methodDragOver, 0, 0, uintptr(unsafe.Pointer(&over))); r != sOK || over != enter {
		t.Fatalf("DragOver: %#x, effect %d after DragEnter's %d", r, over, enter)
	}
	if enter == dropEffectNone {
		comCall(obj, methodDragLeave)
		return enter, dropEffectNone
	}
	dropped = dropEffectAll
	if r := comCall(obj, methodDrop, src.com, 0, 0, uintptr(unsafe.Pointer(&dropped))); r != sOK {
		t.Fatalf("Drop: %#x", r)
	}
	return enter, dropped
}

type received struct {
	paths  [][]string
	errs   []error
	hovers []bool // what OnHover was told, in order
}

func newTestTarget(t *testing.T, dir string, lim Limits) (*Target, *received) {
	got := &received{}
	target, err := NewTarget(Options{Dir: dir, Limits: lim,
		OnDrop:  func(p []string) { got.paths = append(got.paths, p) },
		OnError: func(err error) { got.errs = append(got.errs, err) },
		OnHover: func(over bool) { got.hovers = append(got.hovers, over) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(target.Release)
	return target, got
}

func TestOutlookAttachmentsBecomeFiles(t *testing.T) {
	dir := filepath.Join(testDir(t), "dropped")
	target, got := newTestTarget(t, dir, Limits{MaxFiles: 10, MaxFileSize: 1 << 20, MaxTotal: 4 << 20})
	xlsx := bytes.Repeat([]byte("見積\x00\x01"), 40000) // 320 kB: several reads
	docx := []byte("PK\x03\x04 議事録の中身")
	src := newFakeSource(t, &fakeSource{files: []virtualFile{
		{desc: testFile{name: "見積書_2026年4月.xlsx", flags: fdFileSize, size: uint64(len(xlsx))}, data: xlsx, stream: true},
		{desc: testFile{name: "議事録（営業部）.docx", flags: fdFileSize, size: uint64(len(docx))}, data: docx},
		{desc: testFile{name: "大きすぎる.bin"}, data: make([]byte, 2<<20), stream: true},
	}})
	enter, dropped := drop(t, target, src)
	if enter != dropEffectCopy || dropped != dropEffectCopy {
		t.Fatalf("effects: DragEnter %d, Drop %d, want copy (1)", enter, dropped)
	}
	if len(got.paths) != 1 || len(got.paths[0]) != 2 {
		t.Fatalf("OnDrop got %v (errors %v)", got.paths, got.errs)
	}
	for i, want := range []struct {
		name string
		data []byte
	}{{"見積書_2026年4月.xlsx", xlsx}, {"議事録（営業部）.docx", docx}} {
		p := got.paths[0][i]
		if filepath.Base(p) != want.name || filepath.Dir(filepath.Dir(p)) != dir {
			t.Errorf("path %d = %s, want %s in a folder under %s", i, p, want.name, dir)
		}
		if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, want.data) {
			t.Errorf("%s: %d bytes (err %v), want %d", p, len(b), err, len(want.data))
		}
	}
	var tl *TooLargeError
	if len(got.errs) != 1 || !errors.As(got.errs[0], &tl) || tl.Name != "大きすぎる.bin" {
		t.Errorf("errors = %v, want 大きすぎる.bin too large", got.errs)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(got.paths[0][0]), "大きすぎる.bin")); !os.IsNotExist(err) {
		t.Error("the file over the bound was left on disk")
	}
	if src.refs != 1 {
		t.Errorf("the data object has %d references after the drop, want 1 (its own)", src.refs)
	}
}

func TestExplorerFilesArePassedAsTheyAre(t *testing.T) {
	in := testDir(t)
	var files []string
	for _, name := range []string{"売上データ_2026年.csv", "報告書.pdf"} {
		p := filepath.Join(in, name)
		if err := os.WriteFile(p, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	dir := filepath.Join(testDir(t), "dropped")
	target, got := newTestTarget(t, dir, Limits{})
	src := newFakeSource(t, &fakeSource{hdrop: files})
	if enter, dropped := drop(t, target, src); enter != dropEffectCopy || dropped != dropEffectCopy {
		t.Fatalf("effects: DragEnter %d, Drop %d, want copy (1)", enter, dropped)
	}
	if len(got.paths) != 1 || len(got.paths[0]) != 2 || got.paths[0][0] != files[0] || got.paths[0][1] != files[1] || got.errs != nil {
		t.Fatalf("OnDrop got %q (errors %v), want %q", got.paths, got.errs, files)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Error("Explorer's files were copied")
	}
	// The window was told the drag came over it, then that it was dropped.
	if fmt.Sprint(got.hovers) != "[true false]" {
		t.Errorf("OnHover got %v, want [true false]", got.hovers)
	}
	// A drag that comes over the window and leaves again: told both, nothing dropped.
	obj := target.IDropTarget()
	effect := uint32(dropEffectAll)
	comCall(obj, methodDragEnter, src.com, 0, 0, uintptr(unsafe.Pointer(&effect)))
	comCall(obj, methodDragLeave)
	if fmt.Sprint(got.hovers) != "[true false true false]" || len(got.paths) != 1 {
		t.Errorf("after a drag that left: OnHover got %v, %d drops", got.hovers, len(got.paths))
	}
}

func TestNoFilesNoDrop(t *testing.T) {
	target, got := newTestTarget(t, testDir(t), Limits{})
	src := newFakeSource(t, &fakeSource{}) // text, say: nothing the window takes
	if enter, _ := drop(t, target, src); enter != dropEffectNone {
		t.Errorf("DragEnter effect %d, want none", enter)
	}
	if got.paths != nil || got.errs != nil || len(src.asked) != 0 || got.hovers != nil {
		t.Errorf("a refused drag was read or shown: %v %v %v %v", got.paths, got.errs, src.asked, got.hovers)
	}
}

func TestQueryInterfaceAndReferences(t *testing.T) {
	target, _ := newTestTarget(t, testDir(t), Limits{})
	obj := target.IDropTarget()
	for _, iid := range []windows.GUID{iidIUnknown, iidIDropTarget} {
		var out uintptr
		if r := comCall(obj, 0, uintptr(unsafe.Pointer(&iid)), uintptr(unsafe.Pointer(&out))); r != sOK || out != obj {
			t.Errorf("QueryInterface(%v) = %#x, %#x", iid, r, out)
		}
		if n := comCall(obj, methodRelease); n != 1 {
			t.Errorf("Release after QueryInterface left %d references, want 1", n)
		}
	}
	other := windows.GUID{Data1: 0x0000010e, Data4: [8]byte{0xC0, 0, 0, 0, 0, 0, 0, 0x46}} // IDataObject
	var out uintptr = 1
	if r := comCall(obj, 0, uintptr(unsafe.Pointer(&other)), uintptr(unsafe.Pointer(&out))); r != eNoInterface || out != 0 {
		t.Errorf("QueryInterface(IDataObject) = %#x, %#x; want E_NOINTERFACE, nil", r, out)
	}
}

// TestRegisterOnAWindow registers a target on a real window and revokes it, as the main window
// does once it is shown.
func TestRegisterOnAWindow(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	class := windows.StringToUTF16Ptr("STATIC")
	hwnd, _, err := procCreateWindowExW.Call(0, uintptr(unsafe.Pointer(class)), 0, 0, 0, 0, 100, 100, 0, 0, 0, 0)
	if hwnd == 0 {
		t.Skipf("no window here: %v", err)
	}
	defer procDestroyWindow.Call(hwnd)
	target, err := Register(hwnd, Options{Dir: testDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Register(hwnd, Options{Dir: testDir(t)}); err == nil {
		t.Error("a second Register on the same window succeeded (want DRAGDROP_E_ALREADYREGISTERED)")
	}
	if !hasDropTarget(hwnd) {
		t.Error("no OleDropTargetInterface property after Register")
	}
	if err := target.Revoke(); err != nil {
		t.Fatal(err)
	}
	if hasDropTarget(hwnd) {
		t.Error("OleDropTargetInterface property left after Revoke")
	}
}

// hasDropTarget is whether hwnd carries the property RegisterDragDrop sets (and
// RevokeDragDrop removes): how another process tells that a window is a drop target.
func hasDropTarget(hwnd uintptr) bool {
	p, _, _ := procGetPropW.Call(hwnd, uintptr(unsafe.Pointer(windows.StringToUTF16Ptr("OleDropTargetInterface"))))
	return p != 0
}

// TestWindowIsDropTarget checks, from outside, that another process's window (titled by
// OLEDROP_WINDOW, e.g. "JobDesk") registered a drop target: RegisterDragDrop leaves the window
// property OleDropTargetInterface. `make test-windows` runs it beside the running window.
func TestWindowIsDropTarget(t *testing.T) {
	title := os.Getenv("OLEDROP_WINDOW")
	if title == "" {
		t.Skip("OLEDROP_WINDOW names no window")
	}
	var hwnd uintptr
	for deadline := time.Now().Add(30 * time.Second); hwnd == 0 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		hwnd, _, _ = procFindWindowW.Call(0, uintptr(unsafe.Pointer(windows.StringToUTF16Ptr(title))))
	}
	if hwnd == 0 {
		t.Fatalf("no window titled %q", title)
	}
	for deadline := time.Now().Add(30 * time.Second); !hasDropTarget(hwnd); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("window %q (%#x) is not an OLE drop target", title, hwnd)
		}
	}
}
