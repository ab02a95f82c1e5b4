package oledrop

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
)

// testDir is a new empty folder removed after the test, file by file: not t.TempDir, whose
// os.RemoveAll fails under Wine 8 (it lacks the POSIX-style delete Go uses on Windows).
func testDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "oledrop-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var all []string
		filepath.WalkDir(dir, func(p string, _ fs.DirEntry, _ error) error { all = append(all, p); return nil })
		for i := len(all) - 1; i >= 0; i-- { // children before their folder
			os.Remove(all[i])
		}
	})
	return dir
}

// testFile is one entry of a FILEGROUPDESCRIPTORW the tests build (here and under Wine).
type testFile struct {
	name     string
	flags    uint32
	attrs    uint32
	size     uint64
	modified time.Time
}

// fileGroupDescriptorW lays files out as Windows does (see the offsets in files.go).
func fileGroupDescriptorW(files ...testFile) []byte {
	b := make([]byte, 4+len(files)*descriptorSize)
	binary.LittleEndian.PutUint32(b, uint32(len(files)))
	for i, f := range files {
		e := b[4+i*descriptorSize:]
		binary.LittleEndian.PutUint32(e, f.flags|0x80000000) // FD_UNICODE
		binary.LittleEndian.PutUint32(e[offAttributes:], f.attrs)
		if !f.modified.IsZero() {
			binary.LittleEndian.PutUint64(e[offLastWrite:], uint64(f.modified.UnixNano()/100)+filetimeUnixDiff)
		}
		binary.LittleEndian.PutUint32(e[offSizeHigh:], uint32(f.size>>32))
		binary.LittleEndian.PutUint32(e[offSizeLow:], uint32(f.size))
		for j, c := range utf16.Encode([]rune(f.name)) {
			if j < maxPath-1 {
				binary.LittleEndian.PutUint16(e[offName+2*j:], c)
			}
		}
	}
	return b
}

func TestParseFileGroupDescriptorW(t *testing.T) {
	mod := time.Date(2026, 4, 1, 9, 30, 0, 0, time.UTC)
	long := strings.Repeat("あ", 300)
	tests := []struct {
		name    string
		in      []byte
		want    []FileDescriptor
		wantErr string
	}{
		{name: "empty", in: nil, wantErr: "0 bytes"},
		{name: "no files", in: fileGroupDescriptorW(), want: []FileDescriptor{}},
		{name: "outlook attachment with size and time",
			in:   fileGroupDescriptorW(testFile{name: "見積書_2026年4月.xlsx", flags: fdFileSize | fdWritesTime, size: 12345, modified: mod}),
			want: []FileDescriptor{{Name: "見積書_2026年4月.xlsx", Size: 12345, HasSize: true, Modified: mod}}},
		{name: "no size flag: size unknown",
			in:   fileGroupDescriptorW(testFile{name: "a.csv", size: 99}),
			want: []FileDescriptor{{Name: "a.csv"}}},
		{name: "size over 4 GiB",
			in:   fileGroupDescriptorW(testFile{name: "big.zip", flags: fdFileSize, size: 5 << 30}),
			want: []FileDescriptor{{Name: "big.zip", Size: 5 << 30, HasSize: true}}},
		{name: "folder entry and file in it",
			in: fileGroupDescriptorW(testFile{name: "資料", flags: fdAttributes, attrs: attrDirectory},
				testFile{name: `資料\報告書.pdf`, flags: fdAttributes, attrs: 0x20}),
			want: []FileDescriptor{{Name: "資料", Dir: true}, {Name: `資料\報告書.pdf`}}},
		{name: "directory attribute without FD_ATTRIBUTES is ignored",
			in:   fileGroupDescriptorW(testFile{name: "x", attrs: attrDirectory}),
			want: []FileDescriptor{{Name: "x"}}},
		{name: "name of MAX_PATH without NUL is cut at the array",
			in:   fileGroupDescriptorW(testFile{name: long}),
			want: []FileDescriptor{{Name: strings.Repeat("あ", maxPath-1)}}},
		{name: "GlobalSize rounded up: trailing bytes ignored",
			in:   append(fileGroupDescriptorW(testFile{name: "a.txt"}), 0, 0, 0, 0, 0, 0),
			want: []FileDescriptor{{Name: "a.txt"}}},
		{name: "count larger than the bytes",
			in:      func() []byte { b := fileGroupDescriptorW(testFile{name: "a"}); b[0] = 2; return b }(),
			wantErr: "names 2 files but holds 1"},
		{name: "huge count", in: []byte{0xff, 0xff, 0xff, 0xff, 0}, wantErr: "holds 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseFileGroupDescriptorW(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d files %+v, want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				if g, w := got[i], tt.want[i]; g.Name != w.Name || g.Size != w.Size || g.HasSize != w.HasSize || g.Dir != w.Dir || !g.Modified.Equal(w.Modified) {
					t.Errorf("file %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func FuzzParseFileGroupDescriptorW(f *testing.F) {
	f.Add(fileGroupDescriptorW(testFile{name: "見積書.xlsx", flags: fdFileSize | fdWritesTime | fdAttributes, size: 10, modified: time.Now()}))
	f.Add(fileGroupDescriptorW(testFile{name: "a"}, testFile{name: `b\..\..\c`}))
	f.Add([]byte{1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		files, err := ParseFileGroupDescriptorW(b)
		if err != nil {
			return
		}
		if 4+len(files)*descriptorSize > len(b) {
			t.Fatalf("%d files from %d bytes", len(files), len(b))
		}
		for _, d := range files {
			if d.HasSize && d.Size < 0 {
				t.Fatalf("negative size %d", d.Size)
			}
			s := SafeName(d.Name)
			if s == "" || strings.ContainsAny(s, `\/:*?"<>|`) || len(s) > maxNameBytes || s == "." || s == ".." {
				t.Fatalf("SafeName(%q) = %q", d.Name, s)
			}
		}
	})
}

func TestSafeName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"見積書_2026年4月.xlsx", "見積書_2026年4月.xlsx"},
		{`資料\報告書.pdf`, "報告書.pdf"},
		{"a/b/c.txt", "c.txt"},
		{`..\..\Windows\win.ini`, "win.ini"},
		{"..", "attachment"},
		{"", "attachment"},
		{"   ", "attachment"},
		{"what?.txt", "what_.txt"},
		{"a<b>:c|d*.csv", "a_b__c_d_.csv"},
		{"tab\there.txt", "tab_here.txt"},
		{"trailing. . ", "trailing"},
		{"CON", "_CON"},
		{"nul.txt", "_nul.txt"},
		{"com1.csv", "_com1.csv"},
		{"COM10.csv", "COM10.csv"},
		{"console.txt", "console.txt"},
		{".profile", ".profile"},
		{"bad\xffutf8.txt", "bad_utf8.txt"},
		{strings.Repeat("あ", 100) + ".xlsx", strings.Repeat("あ", 65) + ".xlsx"},
	}
	for _, tt := range tests {
		if got := SafeName(tt.in); got != tt.want {
			t.Errorf("SafeName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSave(t *testing.T) {
	dir := filepath.Join(testDir(t), "dropped")
	mod := time.Date(2026, 4, 1, 9, 30, 0, 0, time.UTC)
	files := []FileDescriptor{
		{Name: "見積書.xlsx", Size: 5, HasSize: true, Modified: mod},
		{Name: "資料", Dir: true},
		{Name: `資料\見積書.XLSX`},                       // same name, other case: made unique
		{Name: "big.bin", Size: 100, HasSize: true}, // declared too large: not read
		{Name: "liar.bin", Size: 1, HasSize: true},  // says 1 byte, streams more
		{Name: "broken.pdf"},
	}
	data := [][]byte{[]byte("hello"), nil, []byte("second"), nil, bytes.Repeat([]byte("x"), 50), nil}
	opened := map[int]bool{}
	open := func(i int) (io.ReadCloser, error) {
		opened[i] = true
		if i == 5 {
			return nil, errors.New("the source failed")
		}
		return io.NopCloser(bytes.NewReader(data[i])), nil
	}
	paths, err := Save(dir, files, open, Limits{MaxFiles: 10, MaxFileSize: 10, MaxTotal: 100})
	if len(paths) != 2 {
		t.Fatalf("paths = %v", paths)
	}
	if filepath.Base(paths[0]) != "見積書.xlsx" || filepath.Base(paths[1]) != "見積書 (2).XLSX" {
		t.Errorf("names = %v", paths)
	}
	if filepath.Dir(filepath.Dir(paths[0])) != dir || filepath.Dir(paths[0]) != filepath.Dir(paths[1]) {
		t.Errorf("not one new folder under %s: %v", dir, paths)
	}
	for i, want := range []string{"hello", "second"} {
		if b, _ := os.ReadFile(paths[i]); string(b) != want {
			t.Errorf("%s holds %q, want %q", paths[i], b, want)
		}
	}
	if st, _ := os.Stat(paths[0]); !st.ModTime().Equal(mod) {
		t.Errorf("modified %v, want %v", st.ModTime(), mod)
	}
	if opened[3] || opened[1] {
		t.Error("a folder or a file declared too large was read")
	}
	var tl *TooLargeError
	if !errors.As(err, &tl) || err == nil || !strings.Contains(err.Error(), "big.bin") || !strings.Contains(err.Error(), "liar.bin") || !strings.Contains(err.Error(), "the source failed") {
		t.Errorf("err = %v", err)
	}
	left, _ := os.ReadDir(filepath.Dir(paths[0]))
	if len(left) != 2 {
		t.Errorf("the folder holds %d files, want the 2 written (no partial ones)", len(left))
	}
}

func TestSaveBounds(t *testing.T) {
	dir := testDir(t)
	open := func(int) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("12345")), nil }
	files := []FileDescriptor{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	paths, err := Save(dir, files, open, Limits{MaxFiles: 2, MaxFileSize: 10, MaxTotal: 100})
	var tl *TooLargeError
	if len(paths) != 2 || !errors.As(err, &tl) || tl.Name != "" {
		t.Errorf("more files than MaxFiles: %v, %v", paths, err)
	}
	paths, err = Save(dir, files, open, Limits{MaxFiles: 10, MaxFileSize: 10, MaxTotal: 12})
	if len(paths) != 2 || !errors.As(err, &tl) || tl.Name != "c" {
		t.Errorf("MaxTotal: %v, %v", paths, err)
	}
	if paths, err := Save(filepath.Join(dir, "none"), nil, open, DefaultLimits); paths != nil || err != nil {
		t.Errorf("empty drop: %v, %v", paths, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "none")); !os.IsNotExist(err) {
		t.Error("an empty drop made a folder")
	}
}
