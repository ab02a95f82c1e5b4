package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"jobdesk/app/aifamily"
	"jobdesk/engine/blob"
	"jobdesk/engine/grants"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// This file owns which files on this device handlers and workflows may read and write: the
// data folder, the folders a person listed in FoldersFile, and the files a person submitted
// (`jobdesk run`, a drop on the window), which Submit grants one by one. Anything else — a path
// an API caller or a workflow definition made up — is refused before it is opened, whichever
// handler, ItemReader or ResultWriter asks (the rule sits in the one blob store of the device,
// deviceBlobs).

// FoldersFile is the settings file in the data folder that lists further folders workflows may
// read and write, as {"allowed_folders": ["/home/me/請求書", …]}. It is read again whenever it
// changes.
const FoldersFile = "folders.json"

// FolderSettings is the content of FoldersFile.
type FolderSettings struct {
	AllowedFolders []string `json:"allowed_folders"`
}

// ServeKeyFile is the file in the data folder holding the key pair `jobdesk serve` accepts
// (mode 0600, made on first use), so exactly the processes that may read the data folder may
// call the API. No handler or workflow may read it.
const ServeKeyFile = "serve-key.json"

// deviceBlobs is the blob store every handler and the workflow engine of this device use: this
// machine's files, relative paths in data folder dir, confined to the folders and files a person
// allowed (the grants in db).
func deviceBlobs(dir string, db *store.DB) *blob.Mux {
	acc := &folderAccess{dir: dir, db: db}
	rule := blob.AllowList{
		Folders: acc.folders,
		// JobDesk's own files: the database, its settings, the API's key pair and the room
		// kept aside for a full disk.
		Deny: []string{
			filepath.Join(dir, store.FileName), filepath.Join(dir, store.FileName+"-wal"),
			filepath.Join(dir, store.FileName+"-shm"), filepath.Join(dir, store.FileName+"-journal"),
			filepath.Join(dir, FoldersFile), filepath.Join(dir, ServeKeyFile), filepath.Join(dir, aifamily.SettingsFile),
			filepath.Join(dir, queue.ReserveFile),
		},
		File:   acc.granted,
		Refuse: acc.refuse,
	}
	return blob.NewMux(blob.Local{Root: dir, Allow: rule.Check})
}

// folderAccess reads the allowed folders (FoldersFile, again when it changes) and the grants.
type folderAccess struct {
	dir string
	db  *store.DB

	mu       sync.Mutex
	modTime  time.Time
	size     int64
	settings []string
}

// folders returns the data folder and the folders of FoldersFile. A file that cannot be read
// or is not valid JSON adds no folder.
func (f *folderAccess) folders() []string {
	dir := f.dir
	path := filepath.Join(dir, FoldersFile)
	st, err := os.Stat(path)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case err != nil:
		f.settings, f.modTime, f.size = nil, time.Time{}, 0
	case !st.ModTime().Equal(f.modTime) || st.Size() != f.size:
		f.settings, f.modTime, f.size = nil, st.ModTime(), st.Size()
		if s, err := LoadFolderSettings(dir); err == nil {
			f.settings = s.AllowedFolders
		}
	}
	return append([]string{dir}, f.settings...)
}

// granted reports whether a person submitted the file at path.
func (f *folderAccess) granted(path string) bool {
	return grants.Has(f.db, path)
}

func (f *folderAccess) refuse(path string) error {
	dir := f.dir
	settings := filepath.Join(dir, FoldersFile)
	return job.Errorf(job.E014, "%s is outside the folders JobDesk may use (the data folder %s and the folders listed in %s); nothing was read or written. Add its folder to %s, or submit the file with `jobdesk run` or the window",
		path, dir, settings, settings).
		WithJa(fmt.Sprintf("%s は JobDesk が使えるフォルダー（データフォルダー %s と %s に書かれたフォルダー）の外にあるため、読み書きしませんでした。使うには、そのフォルダーを %s に追加するか、jobdesk run またはウィンドウからファイルを渡してください。",
			path, dir, settings, settings))
}

// LoadFolderSettings reads FoldersFile in data folder dir (none: no further folders). Relative
// folders are taken inside dir.
func LoadFolderSettings(dir string) (FolderSettings, error) {
	var s FolderSettings
	path := filepath.Join(dir, FoldersFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, job.Wrap(job.E014, err, fmt.Sprintf("the settings file %s cannot be read", path)).WithJa(fmt.Sprintf("設定ファイル %s を読み取れません。", path))
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, job.Wrap(job.E014, err, fmt.Sprintf("the settings file %s is not valid JSON", path)).WithJa(fmt.Sprintf("設定ファイル %s が正しい JSON ではありません。", path))
	}
	for i, d := range s.AllowedFolders {
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		s.AllowedFolders[i] = filepath.Clean(d)
	}
	return s, nil
}

// grantFiles records that a person submitted the files at paths (absolute), so handlers and
// workflows may read them wherever they are.
func (a *App) grantFiles(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	err := grants.Add(ctx, a.db, paths)
	if err != nil && store.IsDiskFull(err) {
		dir := filepath.Dir(a.db.Path)
		return job.Wrap(job.E009, err, fmt.Sprintf("the disk is full: the submitted files could not be recorded in %s; free some space on the disk of %s, then submit them again", a.db.Path, dir)).
			WithJa(fmt.Sprintf("ディスクがいっぱいです。渡されたファイルをデータベースに記録できませんでした。%s のあるディスクの空き容量を増やしてから、もう一度渡してください。", dir))
	}
	if err != nil {
		return job.Wrap(job.E009, err, fmt.Sprintf("the submitted files could not be recorded in %s", a.db.Path)).WithJa("渡されたファイルをデータベースに記録できませんでした。")
	}
	return nil
}

// dataFolderError explains why the database in data folder dir could not be opened: a
// read-only disk or folder and a refused permission are named as such, with the folder.
func dataFolderError(dir string, err error) error {
	switch {
	case errors.Is(err, syscall.EROFS) || strings.Contains(err.Error(), "readonly database") || strings.Contains(err.Error(), "read-only file system"):
		return job.Wrap(job.E009, err, fmt.Sprintf("the data folder %s is read-only (its disk or folder does not allow writing), so its database cannot be opened; choose another folder with --data-dir or make it writable", dir)).
			WithJa(fmt.Sprintf("データフォルダー %s は読み取り専用（ディスクまたはフォルダーが書き込みを許可していません）のため、データベースを開けません。--data-dir で別のフォルダーを指定するか、書き込めるようにしてください。", dir)).Permanent()
	case errors.Is(err, fs.ErrPermission):
		return job.Wrap(job.E009, err, fmt.Sprintf("JobDesk may not write in the data folder %s (permission denied), so its database cannot be opened", dir)).
			WithJa(fmt.Sprintf("データフォルダー %s に書き込む権限がないため、データベースを開けません。", dir)).Permanent()
	}
	return job.Wrap(job.E009, err, fmt.Sprintf("the database in the data folder %s could not be opened", dir)).
		WithJa(fmt.Sprintf("データフォルダー %s のデータベースを開けませんでした。", dir))
}
