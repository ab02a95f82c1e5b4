package oledrop

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	ole32                   = windows.NewLazySystemDLL("ole32.dll")
	procOleInitialize       = ole32.NewProc("OleInitialize")
	procRegisterDragDrop    = ole32.NewProc("RegisterDragDrop")
	procRevokeDragDrop      = ole32.NewProc("RevokeDragDrop")
	procReleaseStgMedium    = ole32.NewProc("ReleaseStgMedium")
	kernel32                = windows.NewLazySystemDLL("kernel32.dll")
	procGlobalLock          = kernel32.NewProc("GlobalLock")
	procGlobalUnlock        = kernel32.NewProc("GlobalUnlock")
	procGlobalSize          = kernel32.NewProc("GlobalSize")
	shell32                 = windows.NewLazySystemDLL("shell32.dll")
	procDragQueryFileW      = shell32.NewProc("DragQueryFileW")
	user32                  = windows.NewLazySystemDLL("user32.dll")
	procRegisterClipboardFw = user32.NewProc("RegisterClipboardFormatW")
)

const (
	cfHDROP         = 15
	tymedHGlobal    = 1
	tymedIStream    = 4
	dvaspectContent = 1
	dropEffectNone  = 0
	dropEffectCopy  = 1
	sOK             = 0
	eNoInterface    = 0x80004002
	ePointer        = 0x80004003
	eUnexpected     = 0x8000FFFF
	streamSeekSet   = 0
)

// COM method numbers (their place in the vtable).
const (
	methodRelease      = 2
	methodGetData      = 3 // IDataObject
	methodQueryGetData = 5 // IDataObject
	methodRead         = 3 // IStream (ISequentialStream::Read)
	methodSeek         = 5 // IStream
)

var (
	iidIUnknown    = windows.GUID{Data1: 0x00000000, Data4: [8]byte{0xC0, 0, 0, 0, 0, 0, 0, 0x46}}
	iidIDropTarget = windows.GUID{Data1: 0x00000122, Data4: [8]byte{0xC0, 0, 0, 0, 0, 0, 0, 0x46}}
)

// formatEtc is FORMATETC; stgMedium is STGMEDIUM (64-bit layouts, which Go's alignment gives).
type formatEtc struct {
	cfFormat uint16
	ptd      uintptr
	aspect   uint32
	lindex   int32
	tymed    uint32
}

type stgMedium struct {
	tymed         uint32
	handle        uintptr // HGLOBAL, IStream* …, by tymed
	unkForRelease uintptr
}

// Clipboard formats registered by name (the same numbers in every process of a session).
var (
	formatsOnce               sync.Once
	cfDescriptor, cfContents  uint16
	errNoFormats              = errors.New("the drag source offers neither files nor virtual files")
	errNotRegisteredClipboard = errors.New("RegisterClipboardFormatW failed")
)

func registerFormats() error {
	formatsOnce.Do(func() {
		cfDescriptor = registerClipboardFormat("FileGroupDescriptorW")
		cfContents = registerClipboardFormat("FileContents")
	})
	if cfDescriptor == 0 || cfContents == 0 {
		return errNotRegisteredClipboard
	}
	return nil
}

func registerClipboardFormat(name string) uint16 {
	r, _, _ := procRegisterClipboardFw.Call(uintptr(unsafe.Pointer(windows.StringToUTF16Ptr(name))))
	return uint16(r)
}

// Options says where a drop's virtual files go and who gets the paths.
type Options struct {
	// Dir is the folder under which each drop of virtual files gets a folder of its own
	// (made when first needed). The files stay there: the jobs made from them read them later.
	Dir string
	// Limits bound one drop (zero: DefaultLimits).
	Limits Limits
	// OnDrop receives the paths of one drop: Explorer's files as they are, virtual files as
	// written under Dir. It runs on the window's thread, inside the drop: return quickly.
	OnDrop func(paths []string)
	// OnError receives what went wrong in a drop (a file too large, a source that failed),
	// after OnDrop got the files that did arrive. Same thread as OnDrop.
	OnError func(error)
	// OnHover is told when a drag that offers files comes over the window (true) and when it
	// leaves or is dropped (false), so the window can show where to drop. Same thread as
	// OnDrop; nil: not told.
	OnHover func(over bool)
}

// Target is an IDropTarget written in Go. Its COM object lives outside Go's heap (OLE keeps
// the pointer); targets maps that pointer back to the Target.
type Target struct {
	opt  Options
	com  uintptr // the IDropTarget* handed to OLE: a block whose first word is &targetVtbl
	refs int32
	hwnd uintptr // the window it is registered on (0: none)

	effect   uint32 // what DragEnter decided for the drag under way
	hovering bool   // OnHover was told true and not false since
}

var (
	targetsMu sync.Mutex
	targets   = map[uintptr]*Target{}
)

// dropTargetVtbl is IDropTarget's vtable; its entries are Go callbacks, made once (Windows
// allows a process a limited number of them).
type dropTargetVtbl struct {
	queryInterface, addRef, release, dragEnter, dragOver, dragLeave, drop uintptr
}

var targetVtbl = dropTargetVtbl{
	queryInterface: syscall.NewCallback(targetQueryInterface),
	addRef:         syscall.NewCallback(func(this uintptr) uintptr { return uintptr(lookup(this).addRef()) }),
	release:        syscall.NewCallback(func(this uintptr) uintptr { return uintptr(lookup(this).release()) }),
	dragEnter:      syscall.NewCallback(targetDragEnter),
	dragOver:       syscall.NewCallback(targetDragOver),
	dragLeave:      syscall.NewCallback(targetDragLeave),
	drop:           syscall.NewCallback(targetDrop),
}

// NewTarget makes an IDropTarget with one reference, the caller's (Release drops it).
// Register is what a window needs; NewTarget alone serves tests that call it directly.
func NewTarget(opt Options) (*Target, error) {
	if err := registerFormats(); err != nil {
		return nil, err
	}
	if opt.Limits == (Limits{}) {
		opt.Limits = DefaultLimits
	}
	com, err := windows.LocalAlloc(windows.LMEM_FIXED|windows.LMEM_ZEROINIT, uint32(unsafe.Sizeof(uintptr(0))))
	if err != nil {
		return nil, err
	}
	*(*uintptr)(ptr(com)) = uintptr(unsafe.Pointer(&targetVtbl))
	t := &Target{opt: opt, com: com, refs: 1}
	targetsMu.Lock()
	targets[com] = t
	targetsMu.Unlock()
	return t, nil
}

// IDropTarget is the target's COM pointer (IDropTarget*), valid while a reference is held.
func (t *Target) IDropTarget() uintptr { return t.com }

// Release drops the reference NewTarget gave.
func (t *Target) Release() { t.release() }

// Register makes hwnd an OLE drop target on the calling thread, which must be the window's
// (OleInitialize is called there; S_FALSE, already initialised, is fine). Explorer's drags then
// come to the Target too, so it also takes CF_HDROP: GLFW's WM_DROPFILES no longer fires for
// OLE drags once a drop target is registered.
func Register(hwnd uintptr, opt Options) (*Target, error) {
	if r, _, _ := procOleInitialize.Call(0); int32(r) < 0 {
		return nil, fmt.Errorf("OleInitialize: %w", syscall.Errno(r))
	}
	t, err := NewTarget(opt)
	if err != nil {
		return nil, err
	}
	if r, _, _ := procRegisterDragDrop.Call(hwnd, t.com); r != sOK {
		t.Release()
		return nil, fmt.Errorf("RegisterDragDrop: HRESULT %#x", uint32(r))
	}
	t.hwnd = hwnd
	return t, nil
}

// Revoke takes the target off its window (before the window is destroyed) and releases it.
func (t *Target) Revoke() error {
	var err error
	if t.hwnd != 0 {
		if r, _, _ := procRevokeDragDrop.Call(t.hwnd); r != sOK {
			err = fmt.Errorf("RevokeDragDrop: HRESULT %#x", uint32(r))
		}
		t.hwnd = 0
	}
	t.Release()
	return err
}

func lookup(this uintptr) *Target {
	targetsMu.Lock()
	defer targetsMu.Unlock()
	return targets[this]
}

func (t *Target) addRef() int32 {
	targetsMu.Lock()
	defer targetsMu.Unlock()
	t.refs++
	return t.refs
}

// release frees the COM block with the last reference.
func (t *Target) release() int32 {
	targetsMu.Lock()
	defer targetsMu.Unlock()
	t.refs--
	if t.refs == 0 {
		delete(targets, t.com)
		windows.LocalFree(windows.Handle(t.com))
		t.com = 0
	}
	return t.refs
}

func targetQueryInterface(this, riid, ppv uintptr) uintptr {
	if ppv == 0 {
		return ePointer
	}
	iid := *(*windows.GUID)(ptr(riid))
	if iid != iidIUnknown && iid != iidIDropTarget {
		*(*uintptr)(ptr(ppv)) = 0
		return eNoInterface
	}
	lookup(this).addRef()
	*(*uintptr)(ptr(ppv)) = this
	return sOK
}

// targetDragEnter accepts a drag that offers files (CF_HDROP) or virtual files, as a copy.
// POINTL is 8 bytes and so travels by value in one register.
func targetDragEnter(this, dataObject, keyState, point, effect uintptr) uintptr {
	t := lookup(this)
	t.effect = dropEffectNone
	if offersFiles(dataObject) {
		t.effect = dropEffectCopy
		t.hover(true)
	}
	return t.answer(effect)
}

func targetDragLeave(this uintptr) uintptr {
	t := lookup(this)
	t.effect = dropEffectNone
	t.hover(false)
	return sOK
}

// hover tells OnHover when the drag over the window changes.
func (t *Target) hover(over bool) {
	if t.hovering == over {
		return
	}
	t.hovering = over
	if t.opt.OnHover != nil {
		t.opt.OnHover(over)
	}
}

func targetDragOver(this, keyState, point, effect uintptr) uintptr {
	return lookup(this).answer(effect)
}

// answer writes the effect decided at DragEnter into *effect, if the source allows a copy.
func (t *Target) answer(effect uintptr) uintptr {
	if effect == 0 {
		return ePointer
	}
	e := (*uint32)(ptr(effect))
	if *e&dropEffectCopy != 0 {
		*e = t.effect
	} else {
		*e = dropEffectNone
	}
	return sOK
}

func targetDrop(this, dataObject, keyState, point, effect uintptr) (hr uintptr) {
	t := lookup(this)
	defer func() {
		if r := recover(); r != nil {
			t.report(fmt.Errorf("drop: %v", r))
			hr = eUnexpected
		}
	}()
	t.hover(false)
	paths, err := t.receive(dataObject)
	if len(paths) > 0 && t.opt.OnDrop != nil {
		t.opt.OnDrop(paths)
	}
	if err != nil {
		t.report(err)
	}
	t.effect = dropEffectNone
	if len(paths) > 0 {
		t.effect = dropEffectCopy
	}
	return t.answer(effect)
}

func (t *Target) report(err error) {
	if t.opt.OnError != nil {
		t.opt.OnError(err)
	}
}

// receive takes a drop's files: Explorer's paths as they are when the source offers CF_HDROP
// (real files, nothing to copy), else the virtual files written under Options.Dir.
func (t *Target) receive(obj uintptr) ([]string, error) {
	if queryGetData(obj, cfHDROP, -1, tymedHGlobal) {
		return hdropPaths(obj)
	}
	if !queryGetData(obj, cfDescriptor, -1, tymedHGlobal) {
		return nil, errNoFormats
	}
	desc, err := getData(obj, cfDescriptor, -1, tymedHGlobal)
	if err != nil {
		return nil, fmt.Errorf("FileGroupDescriptorW: %w", err)
	}
	b, unlock, err := globalBytes(desc.handle)
	if err != nil {
		releaseStgMedium(&desc)
		return nil, err
	}
	files, err := ParseFileGroupDescriptorW(b)
	unlock()
	releaseStgMedium(&desc)
	if err != nil {
		return nil, err
	}
	return Save(t.opt.Dir, files, func(i int) (io.ReadCloser, error) { return openContents(obj, i, files[i]) }, t.opt.Limits)
}

// offersFiles is whether a drag's data object has files of either kind.
func offersFiles(obj uintptr) bool {
	return obj != 0 && (queryGetData(obj, cfHDROP, -1, tymedHGlobal) || queryGetData(obj, cfDescriptor, -1, tymedHGlobal))
}

// comCall calls method number m of the COM object obj. Its arguments may be Go pointers turned
// into uintptr (out parameters): uintptrescapes moves what they point to off the goroutine's
// stack, which may move while a Go callback runs inside the call.
//
//go:uintptrescapes
func comCall(obj uintptr, m int, args ...uintptr) uintptr {
	vtbl := *(*uintptr)(ptr(obj))
	fn := *(*uintptr)(ptr(vtbl + uintptr(m)*unsafe.Sizeof(uintptr(0))))
	r, _, _ := syscall.SyscallN(fn, append([]uintptr{obj}, args...)...)
	return r
}

func queryGetData(obj uintptr, cf uint16, lindex int32, tymed uint32) bool {
	f := formatEtc{cfFormat: cf, aspect: dvaspectContent, lindex: lindex, tymed: tymed}
	return comCall(obj, methodQueryGetData, uintptr(unsafe.Pointer(&f))) == sOK
}

// getData is IDataObject::GetData; the caller releases the medium with releaseStgMedium.
func getData(obj uintptr, cf uint16, lindex int32, tymed uint32) (stgMedium, error) {
	f := formatEtc{cfFormat: cf, aspect: dvaspectContent, lindex: lindex, tymed: tymed}
	var m stgMedium
	if r := comCall(obj, methodGetData, uintptr(unsafe.Pointer(&f)), uintptr(unsafe.Pointer(&m))); r != sOK {
		return stgMedium{}, fmt.Errorf("GetData: HRESULT %#x", uint32(r))
	}
	if m.tymed&tymed == 0 || m.handle == 0 {
		releaseStgMedium(&m)
		return stgMedium{}, fmt.Errorf("GetData gave medium %d, asked %d", m.tymed, tymed)
	}
	return m, nil
}

func releaseStgMedium(m *stgMedium) { procReleaseStgMedium.Call(uintptr(unsafe.Pointer(m))) }

// globalBytes is the memory of an HGLOBAL, locked until unlock is called.
func globalBytes(h uintptr) ([]byte, func(), error) {
	size, _, _ := procGlobalSize.Call(h)
	p, _, err := procGlobalLock.Call(h)
	if p == 0 {
		return nil, nil, fmt.Errorf("GlobalLock: %w", err)
	}
	return unsafe.Slice((*byte)(ptr(p)), size), func() { procGlobalUnlock.Call(h) }, nil
}

// hdropPaths reads the file names of a CF_HDROP.
func hdropPaths(obj uintptr) ([]string, error) {
	m, err := getData(obj, cfHDROP, -1, tymedHGlobal)
	if err != nil {
		return nil, fmt.Errorf("CF_HDROP: %w", err)
	}
	defer releaseStgMedium(&m)
	n, _, _ := procDragQueryFileW.Call(m.handle, 0xFFFFFFFF, 0, 0)
	paths := make([]string, 0, n)
	for i := uintptr(0); i < n; i++ {
		size, _, _ := procDragQueryFileW.Call(m.handle, i, 0, 0)
		buf := make([]uint16, size+1)
		procDragQueryFileW.Call(m.handle, i, uintptr(unsafe.Pointer(&buf[0])), size+1)
		paths = append(paths, windows.UTF16ToString(buf))
	}
	return paths, nil
}

// openContents is virtual file i's bytes (CFSTR_FILECONTENTS with lindex i), from the IStream
// or the HGLOBAL the source chose; closing releases the medium. An HGLOBAL's GlobalSize may be
// rounded up past the file: its descriptor's size, when given and smaller, is the end.
func openContents(obj uintptr, i int, d FileDescriptor) (io.ReadCloser, error) {
	m, err := getData(obj, cfContents, int32(i), tymedIStream|tymedHGlobal)
	if err != nil {
		return nil, err
	}
	if m.tymed&tymedIStream != 0 {
		// Some sources hand over a stream left at its end by an earlier reader.
		comCall(m.handle, methodSeek, 0, streamSeekSet, 0)
		return &streamReader{m: m}, nil
	}
	b, unlock, err := globalBytes(m.handle)
	if err != nil {
		releaseStgMedium(&m)
		return nil, err
	}
	if d.HasSize && d.Size < int64(len(b)) {
		b = b[:d.Size]
	}
	return &globalReader{b: b, close: func() { unlock(); releaseStgMedium(&m) }}, nil
}

// streamReader reads an IStream.
type streamReader struct{ m stgMedium }

func (s *streamReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	p = p[:min(len(p), 1<<20)]
	var n uint32
	r := comCall(s.m.handle, methodRead, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), uintptr(unsafe.Pointer(&n)))
	if int32(r) < 0 {
		return int(n), fmt.Errorf("IStream::Read: HRESULT %#x", uint32(r))
	}
	if n == 0 { // S_OK or S_FALSE with nothing read: the end
		return 0, io.EOF
	}
	return int(n), nil
}

func (s *streamReader) Close() error { releaseStgMedium(&s.m); return nil }

// globalReader reads a locked HGLOBAL.
type globalReader struct {
	b     []byte
	close func()
}

func (g *globalReader) Read(p []byte) (int, error) {
	if len(g.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, g.b)
	g.b = g.b[n:]
	return n, nil
}

func (g *globalReader) Close() error { g.close(); return nil }

// ptr turns an address COM gave (memory outside Go's heap) into a pointer, in the one form
// go vet accepts for a uintptr that is not Go memory.
func ptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
