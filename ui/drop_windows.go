package ui

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver"
	"fyne.io/fyne/v2/storage"

	"jobdesk/engine/job"
	"jobdesk/ui/internal/oledrop"
)

// droppedDir is the data folder's subfolder where attachments dragged out of a mail (virtual
// files) are written, one folder per drop; the jobs made from them read them there.
const droppedDir = "dropped"

// acceptVirtualFiles makes the window an OLE drop target once it has a native window, so that
// attachments dragged out of Outlook become jobs like Explorer's files (GLFW takes only the
// latter). The target takes Explorer's drops too: a registered drop target replaces GLFW's
// WM_DROPFILES for OLE drags. Both end in the drop zone's handleDrop.
func (u *UI) acceptVirtualFiles() {
	nw, ok := u.Window.(driver.NativeWindow)
	if !ok {
		return // not a desktop window (tests)
	}
	opt := oledrop.Options{
		Dir: filepath.Join(u.app.DataDir(), droppedDir),
		OnDrop: func(paths []string) {
			uris := make([]fyne.URI, len(paths))
			for i, p := range paths {
				uris[i] = storage.NewFileURI(p)
			}
			u.do(func() { u.dropZone.handleDrop(fyne.Position{}, uris) })
		},
		OnHover: func(over bool) { u.do(func() { u.setDropHover(over) }) },
		OnError: func(err error) {
			e := virtualDropError(err)
			u.do(func() {
				u.setStatusError(e)
				u.showError(u.tr.T("error.submit_title"), e)
			})
		},
	}
	// The native window exists once the driver has shown it; registering must happen on its
	// thread, which fyne.DoAndWait runs on. Wait for it, for a bounded time.
	go func() {
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && u.ctx.Err() == nil; time.Sleep(200 * time.Millisecond) {
			registered := false
			fyne.DoAndWait(func() {
				nw.RunNative(func(c any) {
					wc, ok := c.(driver.WindowsWindowContext)
					if !ok || wc.HWND == 0 {
						return
					}
					registered = true
					if _, err := oledrop.Register(wc.HWND, opt); err != nil {
						fyne.LogError("Outlook attachments cannot be dropped on this window", err)
					}
				})
			})
			if registered {
				return
			}
		}
	}()
}

// virtualDropError is what a person reads when a dragged attachment did not arrive.
func virtualDropError(err error) *job.Error {
	var tl *oledrop.TooLargeError
	switch {
	case errors.As(err, &tl) && tl.Name == "":
		return job.Wrap(job.E003, err, fmt.Sprintf("More than %d files were dropped at once; the first %d were taken.", tl.Limit, tl.Limit)).
			WithJa(fmt.Sprintf("一度にドロップできるのは %d 件までです。最初の %d 件を受け付けました。", tl.Limit, tl.Limit))
	case errors.As(err, &tl):
		mb := tl.Limit >> 20
		return job.Wrap(job.E003, err, fmt.Sprintf("%s is larger than %d MB and was not taken. Save it and drop the saved file.", tl.Name, mb)).
			WithJa(fmt.Sprintf("%s は %d MB を超えるため受け付けませんでした。保存してから、保存したファイルをドロップしてください。", tl.Name, mb))
	}
	return job.Wrap(job.E014, err, "A dragged attachment could not be received from its program. Save it and drop the saved file.").
		WithJa("ドラッグされた添付ファイルを受け取れませんでした。保存してから、保存したファイルをドロップしてください。")
}
