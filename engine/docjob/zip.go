package docjob

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/japanese"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
)

// Entry is an archive entry that passed every safety check: a relative, decoded, slash-separated
// name, its declared size, and (after ExtractZip) the file it was written to.
type Entry struct {
	Name string `json:"name"`           // decoded entry name, e.g. "資料/表1.xlsx"
	Size int64  `json:"size"`           // declared uncompressed size
	Path string `json:"path,omitempty"` // URI written by ExtractZip
	file *zip.File
}

// Listing is what ListZip found: safe entries to convert, rejected entries with the reason (these
// count as failed children), and names skipped on purpose (__MACOSX, dot-files, folders).
type Listing struct {
	Entries  []Entry  `json:"entries"`
	Rejected []Child  `json:"rejected,omitempty"`
	Skipped  []string `json:"skipped,omitempty"`
}

// DecodeZipName returns an entry's name as text: UTF-8 when the entry says so (flag bit 11) or
// the bytes are valid UTF-8, else strict CP932 (Windows' Japanese default), else EUC-JP, else
// CP932 with substitutions. Decoding comes before any path check because CP932's second byte
// can be 0x5C: 表 is 0x95 0x5C, which reads as a backslash when left undecoded.
func DecodeZipName(raw string, flags uint16) string {
	if flags&0x800 != 0 && utf8.ValidString(raw) {
		return raw
	}
	if utf8.ValidString(raw) {
		return raw
	}
	if s, ok := strictDecode(japanese.ShiftJIS, []byte(raw)); ok {
		return s
	}
	if s, ok := strictDecode(japanese.EUCJP, []byte(raw)); ok {
		return s
	}
	s, _ := decodeWith(japanese.ShiftJIS.NewDecoder(), []byte(raw))
	return s
}

// unsafeName returns why a decoded entry name may not be extracted (zip-slip), or "".
func unsafeName(name string) string {
	switch {
	case name == "":
		return "empty name"
	case strings.ContainsRune(name, '\\'):
		return "backslash in path"
	case strings.HasPrefix(name, "/"):
		return "absolute path"
	case len(name) >= 2 && name[1] == ':' && ((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z')):
		return "drive letter in path"
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7F }):
		return "control character in name"
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "path goes up a folder (..)"
		}
	}
	return ""
}

// unsafeJa gives unsafeName's reasons in Japanese.
var unsafeJa = map[string]string{
	"empty name": "名前が空です", "backslash in path": "パスにバックスラッシュがあります",
	"absolute path": "絶対パスです", "drive letter in path": "パスにドライブ名があります",
	"control character in name": "名前に制御文字があります", "path goes up a folder (..)": "パスが上のフォルダーを指しています（..）",
	"symbolic link": "シンボリックリンクです", "not a local path": "展開先の外を指すパスです",
}

// rejectUnsafe is the failed child of an entry refused for why (one of unsafeName's reasons).
func rejectUnsafe(name, why string) Child {
	return Child{Name: name, Status: StatusFailed, Code: string(job.E004), Reason: "unsafe entry rejected: " + why,
		ReasonJa: "安全でないため展開しませんでした: " + unsafeJa[why]}
}

// skippedName reports entries left out on purpose: macOS resource forks and dot-files.
func skippedName(name string) bool {
	for i, part := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
		if (i == 0 && part == "__MACOSX") || (strings.HasPrefix(part, ".") && part != ".") {
			return true
		}
	}
	return false
}

// ListZip checks an archive without extracting it. Names are decoded first, then unsafe ones
// (absolute, "..", backslash, drive letter, symlink), encrypted ones and ones whose declared size
// exceeds MaxFileSize are rejected one by one. The whole archive fails when it cannot be read
// (E004 damaged), has more than MaxZipEntries entries or declares more than MaxTotalSize in all
// (E003), or when every entry is encrypted (E005).
func ListZip(data []byte) (*Listing, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if zr == nil {
		return nil, errDamaged(KindZIP, err)
	}
	l := &Listing{}
	var total uint64
	encrypted := 0
	for _, f := range zr.File {
		name := DecodeZipName(f.Name, f.Flags)
		if why := unsafeName(name); why != "" {
			l.Rejected = append(l.Rejected, rejectUnsafe(name, why))
			continue
		}
		if f.Mode()&fs.ModeSymlink != 0 {
			l.Rejected = append(l.Rejected, rejectUnsafe(name, "symbolic link"))
			continue
		}
		if strings.HasSuffix(name, "/") || f.Mode().IsDir() {
			continue
		}
		if skippedName(name) {
			l.Skipped = append(l.Skipped, name)
			continue
		}
		if f.Flags&1 != 0 {
			encrypted++
			l.Rejected = append(l.Rejected, Child{Name: name, Status: StatusFailed, Code: string(job.E005),
				Reason: "password-protected entry", ReasonJa: "パスワードで保護されたファイルです"})
			continue
		}
		if f.UncompressedSize64 > MaxFileSize {
			l.Rejected = append(l.Rejected, Child{Name: name, Status: StatusFailed, Code: string(job.E003),
				Reason:   fmt.Sprintf("entry too large: %s (limit %s)", humanSize(int64(min(f.UncompressedSize64, 1<<62))), humanSize(MaxFileSize)),
				ReasonJa: fmt.Sprintf("ファイルが大きすぎます: %s（上限 %s）", humanSize(int64(min(f.UncompressedSize64, 1<<62))), humanSize(MaxFileSize))})
			continue
		}
		total += f.UncompressedSize64
		l.Entries = append(l.Entries, Entry{Name: name, Size: int64(f.UncompressedSize64), file: f})
	}
	if n := len(l.Entries) + len(l.Rejected); n > MaxZipEntries {
		return nil, job.Errorf(job.E003, "the ZIP archive has %d entries (limit %d)", n, MaxZipEntries).
			WithJa(fmt.Sprintf("ZIPファイルの中のファイル数が多すぎます: %d（上限 %d）", n, MaxZipEntries)).WithName(ErrNameTooLarge)
	}
	if total > MaxTotalSize {
		return nil, errTooLarge("the expanded ZIP archive", "展開後のZIPファイル", int64(min(total, 1<<62)), MaxTotalSize)
	}
	if encrypted > 0 && len(l.Entries) == 0 {
		return nil, errPassword(KindZIP)
	}
	return l, nil
}

// readEntry reads one entry, never more than its declared size (a larger stream is a zip bomb:
// E003) and never more than budget allows.
func readEntry(e Entry, budget *int64) ([]byte, error) {
	if e.Size > *budget {
		return nil, errTooLarge("the expanded ZIP archive", "展開後のZIPファイル", MaxTotalSize-*budget+e.Size, MaxTotalSize)
	}
	rc, err := e.file.Open()
	if err != nil {
		return nil, errDamaged(KindZIP, err)
	}
	defer rc.Close()
	buf := bytes.NewBuffer(make([]byte, 0, min(e.Size, 1<<20)))
	lr := &limitReader{r: rc, n: e.Size}
	_, err = io.Copy(buf, lr)
	*budget -= int64(buf.Len())
	if lr.over {
		return nil, job.Errorf(job.E003, "the entry %s expands beyond its declared size (zip bomb)", e.Name).
			WithJa(fmt.Sprintf("%s が宣言サイズを超えて展開されます（ZIP爆弾の疑い）。", e.Name)).WithName(ErrNameTooLarge)
	}
	if err != nil {
		return nil, errDamaged(KindZIP, err)
	}
	return buf.Bytes(), nil
}

// ExtractZip writes the archive's safe entries to s under prefix (each atomically, at its
// relative name) so a workflow's Map can convert each as a child job, and returns them with Path
// set to their URIs, plus the listing's rejected and skipped entries. Sizes are enforced while
// writing as in ConvertZip.
func ExtractZip(ctx context.Context, data []byte, s blob.Store, prefix string) (*Listing, error) {
	l, err := ListZip(data)
	if err != nil {
		return nil, err
	}
	budget := int64(MaxTotalSize)
	used := map[string]bool{}
	var kept []Entry
	for _, e := range l.Entries {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		b, err := readEntry(e, &budget)
		if err != nil {
			je := job.AsError(err)
			l.Rejected = append(l.Rejected, Child{Name: e.Name, Status: StatusFailed, Code: string(je.Code), Reason: je.Message, ReasonJa: je.MessageJa})
			if je.Code == job.E003 && budget <= 0 {
				return nil, je
			}
			continue
		}
		rel := filepath.FromSlash(strings.TrimPrefix(e.Name, "./"))
		if !filepath.IsLocal(rel) {
			l.Rejected = append(l.Rejected, rejectUnsafe(e.Name, "not a local path"))
			continue
		}
		rel = fitEntryPath(rel, used)
		used[rel] = true
		uri := outputURI(prefix, filepath.ToSlash(rel))
		if err := blob.WriteAll(ctx, s, uri, b); err != nil {
			return nil, job.Wrap(job.E009, err, "could not write an archive entry").WithJa("展開したファイルを書き込めませんでした。")
		}
		e.Path = uri
		kept = append(kept, e)
	}
	l.Entries = kept
	return l, nil
}

// fitEntryPath is where ExtractZip writes the entry at relative path rel: each folder and the
// file name cut to MaxOutputName bytes (a name may be longer inside an archive than on disk),
// and a file name already used numbered " (2)", " (3)"… in archive order, so every entry has a
// file of its own, the same whichever order they are converted in.
func fitEntryPath(rel string, used map[string]bool) string {
	parts := strings.Split(rel, string(filepath.Separator))
	for i, p := range parts[:len(parts)-1] {
		parts[i] = cutUTF8(p, MaxOutputName)
	}
	dir, base := filepath.Join(parts[:len(parts)-1]...), parts[len(parts)-1]
	cand := filepath.Join(dir, fitName(base, ""))
	for i := 2; used[cand]; i++ {
		cand = filepath.Join(dir, fitName(base, fmt.Sprintf(" (%d)", i)))
	}
	return cand
}

// ConvertZip converts every safe entry in-process (the direct path, without a workflow) and
// returns one Markdown document with a "# entry name" section per entry. Entries that fail, are
// rejected or nest deeper than MaxZipDepth are listed in Children as failed, and the Doc's Status
// is then partial; when no entry converts the archive fails with the first entry's error.
func ConvertZip(ctx context.Context, data []byte, name string, opt Options) (*Doc, error) {
	depth := opt.depth + 1
	if depth > MaxZipDepth {
		return nil, job.Errorf(job.E003, "ZIP archives are nested more than %d deep", MaxZipDepth).
			WithJa(fmt.Sprintf("ZIPファイルの入れ子が深すぎます（上限 %d 階層）。", MaxZipDepth)).WithName(ErrNameTooLarge)
	}
	if opt.budget == nil {
		b := int64(MaxTotalSize)
		opt.budget = &b
	}
	l, err := ListZip(data)
	if err != nil {
		return nil, err
	}
	d := &Doc{Kind: KindZIP, Method: MethodNative}
	var b strings.Builder
	var firstErr error
	converted := 0
	for i, e := range l.Entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		child := Child{Name: e.Name}
		body, err := readEntry(e, opt.budget)
		var cd *Doc
		if err == nil {
			child.Kind = Detect(body, e.Name)
			copt := opt
			copt.depth = depth
			copt.Progress = nil
			copt.noAssets = true // an entry's pictures are not written: their alt text stands in
			cd, err = ConvertKind(ctx, body, e.Name, child.Kind, copt)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			je := job.AsError(err)
			child.Status, child.Code, child.Reason, child.ReasonJa = StatusFailed, string(je.Code), je.Message, je.MessageJa
			if firstErr == nil {
				firstErr = je
			}
		} else {
			converted++
			st, why := cd.Status()
			child.Status, child.Reason, child.Chars = st, why, utf8.RuneCountInString(cd.Markdown)
			fmt.Fprintf(&b, "# %s\n\n", escapeInline(e.Name))
			b.WriteString(strings.TrimSpace(cd.Markdown))
			b.WriteString("\n\n")
			d.Pages += cd.Pages
			for _, c := range cd.Children {
				c.Name = e.Name + "/" + c.Name
				d.Children = append(d.Children, c)
			}
		}
		d.Children = append(d.Children, child)
		if opt.Progress != nil {
			opt.Progress(float64(i+1)*90/float64(len(l.Entries)), fmt.Sprintf("entry %d of %d", i+1, len(l.Entries)))
		}
	}
	d.Children = append(d.Children, l.Rejected...)
	if len(l.Skipped) > 0 {
		d.Notes = append(d.Notes, "skipped: "+strings.Join(l.Skipped, ", "))
	}
	if converted == 0 {
		if firstErr != nil {
			return nil, firstErr
		}
		if len(l.Rejected) > 0 {
			return nil, errNothingConverted(l.Rejected[0])
		}
		return nil, job.Errorf(job.E004, "the ZIP archive holds no files to convert").
			WithJa("ZIPファイルの中に変換できるファイルがありません。").WithName(ErrNameNothing)
	}
	for _, c := range d.Children {
		if c.Status != StatusReady {
			d.Method = MethodPartial
		}
	}
	d.Markdown = b.String()
	return d, nil
}

// errNothingConverted is the error of an archive none of whose entries converted: the first
// failed entry's code and reason (a zip-slip name is E004, an entry over the size limit or
// nested too deep E003, a password-protected one E005), so the person learns why.
func errNothingConverted(first Child) *job.Error {
	code := job.Code(first.Code)
	if _, ok := job.Codes[code]; !ok {
		code = job.E004
	}
	ja := first.ReasonJa
	if ja == "" {
		ja = job.Codes[code].Ja
	}
	name := ErrNameNothing
	switch code {
	case job.E003:
		name = ErrNameTooLarge
	case job.E005:
		name = ErrNamePassword
	case job.E006:
		name = ErrNameEncoding
	}
	return job.Errorf(code, "no entry of the ZIP archive could be converted: %s: %s", first.Name, first.Reason).
		WithJa(fmt.Sprintf("ZIPファイルの中に変換できたファイルがありません。%s: %s", first.Name, strings.TrimSuffix(ja, "。"))).
		WithName(name).Permanent()
}
