package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"

	"jobdesk/app"
	"jobdesk/engine/csvjob"
)

// writeRowsCSV writes a CSV file of header and rows into a temporary folder.
func writeRowsCSV(t testing.TB, name, header string, rows ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(header+"\n"+strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSchemaDialogRoundTrip drops a sales CSV no schema fits: the schema dialog opens filled from
// the sniffer; edited (a rule, the tolerance) and saved, the schema lands in schemas/NAME.json in
// the command line's --schema format and the file runs with it; a second file with the same
// header then runs at once, without the dialog.
func TestSchemaDialogRoundTrip(t *testing.T) {
	for _, lang := range []string{LangJa, LangEn} {
		t.Run(lang, func(t *testing.T) {
			h := newHarness(t, lang)
			u := h.ui
			u.Start()
			if err := h.app.StartEngine(u.ctx); err != nil {
				t.Fatal(err)
			}
			first := writeRowsCSV(t, "売上.csv", "商品コード,数量,単価", "P0001,3,120.5", "P0002,1,99", "P0003,7,10")
			u.handleDrop(fyne.NewPos(5, 5), []fyne.URI{storage.NewFileURI(first)})
			h.waitFor("the schema dialog", func() bool { return u.schemaDlg != nil })
			sd := u.schemaDlg
			if sd.name.Text != "売上" || sd.enc.Selected != "utf-8" || sd.delim.Selected != "," || sd.key.Selected != "商品コード" {
				t.Fatalf("dialog = name %q enc %q delim %q key %q", sd.name.Text, sd.enc.Selected, sd.delim.Selected, sd.key.Selected)
			}
			if len(sd.cols) != 3 || sd.cols[1].typ.Selected != u.tr.T("schema.type.integer") ||
				sd.cols[2].typ.Selected != u.tr.T("schema.type.decimal") || sd.cols[0].pattern.Text != `^P\d{4}$` {
				t.Fatalf("columns not filled from the sniffer: %+v", sd.cols)
			}

			_ = test.LaidOutObjects(u.Window.Canvas().Overlays().Top())

			// A bad number keeps the dialog open and says why.
			sd.percent.SetText("abc")
			sd.save()
			if !sd.problem.Visible() || len(u.model.rows) != 0 {
				t.Fatal("a bad tolerance was saved")
			}
			sd.name.SetText("売上明細")
			sd.percent.SetText("10")
			sd.count.SetText("3")
			sd.save()
			if sd.problem.Visible() {
				t.Fatalf("save failed: %s", sd.problem.Text)
			}
			file := h.app.SchemaFile("売上明細")
			cli, err := csvjob.LoadSchema(file) // the command line's reader takes it as it is
			if err != nil || len(cli.Columns) != 3 || cli.Key != "商品コード" {
				t.Fatalf("saved schema as --schema: %+v, %v", cli, err)
			}
			saved, err := app.LoadSavedSchema(file)
			if err != nil || *saved.TolerancePercent != 10 || *saved.ToleranceCount != 3 || saved.Delimiter != "," {
				t.Fatalf("saved = %+v, %v", saved, err)
			}
			h.waitFor("the first file's job", func() bool { return len(u.model.rows) == 1 })
			id := u.model.rows[0].ID
			h.waitFor("the job to succeed", func() bool {
				j, _ := h.app.Get(u.ctx, id)
				return j.Status.Final()
			})
			if j, _ := h.app.Get(u.ctx, id); string(j.Status) != "SUCCEEDED" {
				t.Fatalf("job with the saved schema = %s %v", j.Status, j.Error)
			}
			if u.selected != id {
				t.Fatalf("the new job is not selected: %d, want %d", u.selected, id)
			}

			// Same header, other rows: no dialog, it runs with the saved schema.
			u.schemaDlg = nil
			second := writeRowsCSV(t, "売上2.csv", "商品コード,数量,単価", "P0100,2,1.5")
			u.handleDrop(fyne.NewPos(5, 5), []fyne.URI{storage.NewFileURI(second)})
			h.waitFor("the second file's job", func() bool { return len(u.model.rows) == 2 })
			if u.schemaDlg != nil {
				t.Fatal("the dialog opened again for a known header")
			}
			j, _ := h.app.Get(u.ctx, u.model.rows[0].ID)
			if !strings.Contains(string(j.Input), `"name":"売上明細"`) {
				t.Fatalf("second job's input does not name the schema: %s", j.Input)
			}
		})
	}
}
