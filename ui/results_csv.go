package ui

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
	"jobdesk/engine/job"
)

// csvPageSize is how many rejected rows the table shows at a time.
const csvPageSize = 100

// csvErrorView is a CSV job's rejected rows as a table (line, column, value, reason in the
// window's language), a page at a time: 100,000 rows cost one page read per page, and the
// table draws only the rows on screen. A tapped cell shows its whole row under the table.
type csvErrorView struct {
	rv     *resultViews
	id     int64
	offset int
	page   app.CSVErrorPage
	root   *fyne.Container
	table  *widget.Table
	where  *widget.Label
	prev   *widget.Button
	next   *widget.Button
	detail *widget.Label
}

func newCSVErrorView(rv *resultViews, j job.Job, first app.CSVErrorPage) *csvErrorView {
	v := &csvErrorView{rv: rv, id: j.ID, page: first}
	tr := rv.host.tr()
	if first.Total == 0 {
		l := widget.NewLabel(tr.T("csv.no_errors"))
		v.root = container.NewVBox(l)
		return v
	}
	heads := []string{tr.T("csv.col.line"), tr.T("csv.col.column"), tr.T("csv.col.value"), tr.T("csv.col.reason")}
	v.table = widget.NewTableWithHeaders(
		func() (int, int) { return len(v.page.Rows), 4 },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(id widget.TableCellID, o fyne.CanvasObject) {
			if id.Row < 0 || id.Row >= len(v.page.Rows) {
				return
			}
			o.(*widget.Label).SetText(v.cell(v.page.Rows[id.Row], id.Col))
		})
	v.table.ShowHeaderColumn = false
	v.table.CreateHeader = func() fyne.CanvasObject {
		l := widget.NewLabel("")
		l.TextStyle.Bold = true
		return l
	}
	v.table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if id.Row == -1 && id.Col >= 0 && id.Col < len(heads) {
			o.(*widget.Label).SetText(heads[id.Col])
		}
	}
	for c, w := range []float32{64, 110, 100, 360} {
		v.table.SetColumnWidth(c, w)
	}
	v.detail = widget.NewLabel(tr.T("csv.tap_row"))
	v.detail.Wrapping = fyne.TextWrapWord
	v.detail.Selectable = true
	v.table.OnSelected = func(id widget.TableCellID) {
		if id.Row >= 0 && id.Row < len(v.page.Rows) {
			r := v.page.Rows[id.Row]
			text := tr.T("csv.row_detail", groupInt(r.Line), r.Column, r.Value, v.reason(r))
			v.detail.Wrapping = wrapFor(text)
			v.detail.SetText(text)
		}
	}
	v.where = widget.NewLabel("")
	v.prev = widget.NewButtonWithIcon("", theme.NavigateBackIcon(), func() { v.load(v.offset - csvPageSize) })
	v.next = widget.NewButtonWithIcon("", theme.NavigateNextIcon(), func() { v.load(v.offset + csvPageSize) })
	v.showPlace()
	title := widget.NewLabel(errorsTitle(tr, rejectedRows(j), first.Total))
	title.TextStyle.Bold = true
	nav := container.NewHBox(v.prev, v.where, v.next)
	v.root = container.NewVBox(container.NewBorder(nil, nil, title, nav))
	if s := v.firstReasons(3); s != "" {
		reasons := widget.NewLabel(tr.T("csv.first_reasons", s))
		reasons.Wrapping = wrapFor(reasons.Text)
		v.root.Add(reasons)
	}
	v.root.Add(tallBox(v.table, 320))
	v.root.Add(v.detail)
	return v
}

// rejectedRows is how many rows job j rejected (its result's errorCount), -1 when it does not say.
func rejectedRows(j job.Job) int64 {
	var r struct {
		ErrorCount *int64 `json:"errorCount"`
	}
	if json.Unmarshal(j.Result, &r) != nil || r.ErrorCount == nil {
		return -1
	}
	return *r.ErrorCount
}

// errorsTitle heads the rejected rows: their count, and the errors' when a row had several.
func errorsTitle(tr *translator, rows int64, errors int) string {
	if rows < 0 || rows == int64(errors) {
		return tr.T("csv.errors_title", groupInt(int64(errors)))
	}
	return tr.T("csv.errors_title_n", groupInt(rows), groupInt(int64(errors)))
}

// firstReasons names up to n different reasons of the first page's rows, each with its column,
// in the order they first occur: why an import was refused, at a glance.
func (v *csvErrorView) firstReasons(n int) string {
	var out []string
	seen := map[string]bool{}
	for _, r := range v.page.Rows {
		s := v.reason(r)
		if r.Column != "" {
			s = v.rv.host.tr().T("csv.reason_in_column", r.Column, s)
		}
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		if out = append(out, s); len(out) == n {
			break
		}
	}
	return strings.Join(out, " / ")
}

// cell is what column col of row r shows.
func (v *csvErrorView) cell(r app.CSVErrorRow, col int) string {
	switch col {
	case 0:
		return groupInt(r.Line)
	case 1:
		return r.Column
	case 2:
		return r.Value
	}
	return v.reason(r)
}

// reason is a row's reason in the window's language, else the other one.
func (v *csvErrorView) reason(r app.CSVErrorRow) string {
	if v.rv.host.tr().lang == LangJa && r.ReasonJa != "" {
		return r.ReasonJa
	}
	if r.Reason != "" {
		return r.Reason
	}
	return r.ReasonJa
}

// showPlace says which rows are on show and enables the page buttons that lead somewhere.
func (v *csvErrorView) showPlace() {
	last := v.offset + len(v.page.Rows)
	v.where.SetText(v.rv.host.tr().T("csv.rows_of", groupInt(int64(v.offset+1)), groupInt(int64(last)), groupInt(int64(v.page.Total))))
	setEnabled(v.prev, v.offset > 0)
	setEnabled(v.next, last < v.page.Total)
}

// load reads the page starting at offset off the UI goroutine and shows it.
func (v *csvErrorView) load(offset int) {
	if offset < 0 || offset >= v.page.Total {
		return
	}
	setEnabled(v.prev, false)
	setEnabled(v.next, false)
	go func() {
		ctx, cancel := context.WithTimeout(v.rv.host.ctx, 30*time.Second)
		defer cancel()
		page, err := v.rv.host.svc.CSVErrors(ctx, v.id, offset, csvPageSize)
		v.rv.host.do(func() {
			if err != nil {
				v.rv.host.setStatusError(err)
				v.showPlace()
				return
			}
			v.offset, v.page = offset, page
			v.table.UnselectAll()
			v.table.ScrollToTop()
			v.table.Refresh()
			v.showPlace()
		})
	}()
}
