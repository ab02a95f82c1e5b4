// Command windowfloor is the smallest window the toolkit can show JobDesk's kind of text in: one
// Japanese label and one button, at JobDesk's window size. scripts/window-bench.sh measures its
// resident memory beside JobDesk's, so the figures say what the toolkit, the system's Japanese
// typeface and the display's OpenGL cost before JobDesk adds anything.
package main

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

func main() {
	a := app.NewWithID("jp.jobdesk.windowfloor")
	w := a.NewWindow("JobDesk")
	w.SetContent(container.NewVBox(widget.NewLabel("ジョブはまだありません。"), widget.NewButton("ファイルを選択…", nil)))
	w.Resize(fyne.NewSize(1180, 760))
	w.ShowAndRun()
}
