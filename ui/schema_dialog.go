package ui

import (
	"context"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
)

// schemaDialog is the dialog that sets up a CSV layout no saved schema fits: it starts from the
// sniffer's reading of the dropped file (encoding, delimiter, each column's type, whether it is
// required, its pattern and minimum, which column is the key and which adds up into which table
// field) and the tolerance of bad rows; saved under a name (schemas/NAME.json, the format of the
// command line's --schema files), later files with the same header run with it without asking.
type schemaDialog struct {
	u       *UI
	path    string
	d       *dialog.CustomDialog
	name    *keyEntry
	enc     *widget.Select
	delim   *widget.Select
	key     *widget.Select
	percent *keyEntry
	count   *keyEntry
	cols    []*schemaColumnRow
	problem *widget.Label
	// saved is called with the saved schema after a successful save (the file then runs).
	saved func(app.SavedSchema)
}

// schemaColumnRow is one column's editors.
type schemaColumnRow struct {
	col      app.CSVColumn
	typ      *widget.Select
	required *widget.Check
	field    *widget.Select
	combine  *widget.Select
	pattern  *keyEntry
	min      *keyEntry
}

// delimiterChoices are the delimiters a person picks from, as shown, and as the job takes them.
var delimiterChoices = []struct{ label, value string }{{",", ","}, {"Tab", "\t"}, {";", ";"}, {"|", "|"}}

var (
	encodingChoices = []string{"utf-8", "shift_jis", "euc-jp", "utf-16le", "utf-16be"}
	typeChoices     = []string{app.CSVTypeString, app.CSVTypeInteger, app.CSVTypeDecimal, app.CSVTypeDate, app.CSVTypeBoolean}
	fieldChoices    = []string{"", app.CSVFieldUserID, app.CSVFieldLogins, app.CSVFieldPosts}
	combineChoices  = []string{"", app.CSVCombineSum, app.CSVCombineMax, app.CSVCombineMin, app.CSVCombineFirst, app.CSVCombineLast}
)

// showSchemaDialog opens the schema dialog for the CSV file at path from the sniffer's proposal;
// "Save and run" saves the schema and submits the file with it.
func (u *UI) showSchemaDialog(path string, proposal *app.CSVSniffResult) *schemaDialog {
	s := app.SavedSchema{Schema: *proposal.Schema, Encoding: proposal.Encoding, Delimiter: proposal.Delimiter}
	sd := u.newSchemaDialog(s, path, u.tr.T("schema.intro", baseName(path)))
	sd.saved = func(saved app.SavedSchema) { u.submitWithSchema(path, saved) }
	sd.show()
	return sd
}

// editSchema opens the schema dialog for a saved schema (from the settings' CSV page).
func (u *UI) editSchema(s app.SavedSchema, done func()) *schemaDialog {
	sd := u.newSchemaDialog(s, "", "")
	sd.saved = func(app.SavedSchema) {
		if done != nil {
			done()
		}
	}
	sd.show()
	return sd
}

func (u *UI) newSchemaDialog(s app.SavedSchema, path, intro string) *schemaDialog {
	tr := u.tr
	sd := &schemaDialog{u: u, path: path}
	sd.name = newKeyEntry(u, false)
	sd.name.SetText(s.Name)
	sd.enc = newSelect(tr, encodingChoices, nil)
	sd.enc.SetSelected(normalEncoding(s.Encoding))
	labels := make([]string, len(delimiterChoices))
	chosen := labels[:0:0]
	for i, c := range delimiterChoices {
		labels[i] = c.label
		if c.value == s.Delimiter || s.Delimiter == "" && i == 0 {
			chosen = append(chosen, c.label)
		}
	}
	sd.delim = newSelect(tr, labels, nil)
	if len(chosen) > 0 {
		sd.delim.SetSelected(chosen[0])
	}
	sd.key = newSelect(tr, s.Names(), nil)
	sd.key.SetSelected(s.Key)
	if s.Key == "" && len(s.Columns) > 0 {
		sd.key.SetSelected(s.Columns[0].Name)
	}
	def := u.settings().CSV
	sd.percent = newKeyEntry(u, false)
	sd.percent.SetText(strconv.FormatFloat(def.TolerancePercent, 'f', -1, 64))
	if s.TolerancePercent != nil {
		sd.percent.SetText(strconv.FormatFloat(*s.TolerancePercent, 'f', -1, 64))
	}
	sd.count = newKeyEntry(u, false)
	sd.count.SetText(strconv.Itoa(def.ToleranceCount))
	if s.ToleranceCount != nil {
		sd.count.SetText(strconv.Itoa(*s.ToleranceCount))
	}

	grid := container.NewGridWithColumns(7,
		boldLabel(tr.T("schema.col.name")), boldLabel(tr.T("schema.col.type")), boldLabel(tr.T("schema.col.required")),
		boldLabel(tr.T("schema.col.field")), boldLabel(tr.T("schema.col.combine")), boldLabel(tr.T("schema.col.pattern")),
		boldLabel(tr.T("schema.col.min")))
	for _, c := range s.Columns {
		r := &schemaColumnRow{col: c}
		r.typ = newSelect(tr, labelsOf(tr, "schema.type.", typeChoices), nil)
		r.typ.SetSelected(tr.T("schema.type." + c.Type))
		r.required = widget.NewCheck("", nil)
		r.required.SetChecked(c.Required)
		r.field = newSelect(tr, labelsOf(tr, "schema.field.", fieldChoices), nil)
		r.field.SetSelected(choiceLabel(tr, "schema.field.", c.Field))
		r.combine = newSelect(tr, labelsOf(tr, "schema.combine.", combineChoices), nil)
		r.combine.SetSelected(choiceLabel(tr, "schema.combine.", c.Combine))
		r.pattern = newKeyEntry(u, false)
		r.pattern.SetText(c.Pattern)
		r.min = newKeyEntry(u, false)
		if c.Min != nil {
			r.min.SetText(strconv.FormatFloat(*c.Min, 'f', -1, 64))
		}
		name := widget.NewLabel(c.Name)
		name.Truncation = fyne.TextTruncateEllipsis
		grid.Add(name)
		grid.Add(r.typ)
		grid.Add(r.required)
		grid.Add(r.field)
		grid.Add(r.combine)
		grid.Add(r.pattern)
		grid.Add(r.min)
		sd.cols = append(sd.cols, r)
	}
	sd.problem = widget.NewLabel("")
	sd.problem.Importance = widget.DangerImportance
	sd.problem.Wrapping = fyne.TextWrapWord
	sd.problem.Hide()

	form := widget.NewForm(
		widget.NewFormItem(tr.T("schema.name"), sd.name),
		widget.NewFormItem(tr.T("schema.encoding"), sd.enc),
		widget.NewFormItem(tr.T("schema.delimiter"), sd.delim),
		widget.NewFormItem(tr.T("schema.key"), sd.key),
		widget.NewFormItem(tr.T("schema.tolerance_percent"), sd.percent),
		widget.NewFormItem(tr.T("schema.tolerance_count"), sd.count),
	)
	var top []fyne.CanvasObject
	if intro != "" {
		l := widget.NewLabel(intro)
		l.Wrapping = fyne.TextWrapWord
		top = append(top, l)
	}
	top = append(top, form)
	body := container.NewBorder(container.NewVBox(top...), sd.problem, nil, nil, container.NewVScroll(grid))

	save := widget.NewButtonWithIcon(tr.T("schema.save"), theme.DocumentSaveIcon(), sd.save)
	if path == "" {
		save.SetText(tr.T("schema.save_only"))
	}
	save.Importance = widget.HighImportance
	cancel := widget.NewButtonWithIcon(tr.T("dialog.cancel"), theme.CancelIcon(), func() { sd.d.Hide() })
	sd.d = dialog.NewCustomWithoutButtons(tr.T("schema.title"), body, u.Window)
	sd.d.SetButtons([]fyne.CanvasObject{cancel, save})
	sd.d.Resize(fyne.NewSize(1060, 620))
	return sd
}

func (sd *schemaDialog) show() {
	sd.u.schemaDlg = sd
	sd.u.dialogOpened(sd.d)
	sd.d.Show()
}

// schema reads the editors back into a saved schema (not yet checked).
func (sd *schemaDialog) schema() (app.SavedSchema, error) {
	tr := sd.u.tr
	s := app.SavedSchema{Encoding: sd.enc.Selected}
	s.Name = strings.TrimSpace(sd.name.Text)
	s.Key = sd.key.Selected
	for _, c := range delimiterChoices {
		if c.label == sd.delim.Selected {
			s.Delimiter = c.value
		}
	}
	for _, r := range sd.cols {
		c := app.CSVColumn{Name: r.col.Name, Type: valueOf(tr, "schema.type.", typeChoices, r.typ.Selected), Required: r.required.Checked,
			Pattern: strings.TrimSpace(r.pattern.Text), Max: r.col.Max, MinDate: r.col.MinDate, MaxDate: r.col.MaxDate,
			Field: valueOf(tr, "schema.field.", fieldChoices, r.field.Selected), Combine: valueOf(tr, "schema.combine.", combineChoices, r.combine.Selected)}
		if t := strings.TrimSpace(r.min.Text); t != "" {
			v, err := strconv.ParseFloat(t, 64)
			if err != nil {
				return s, errorf(tr.T("schema.bad_min", r.col.Name))
			}
			c.Min = &v
		}
		s.Columns = append(s.Columns, c)
	}
	p, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(sd.percent.Text), "%"), 64)
	if err != nil {
		return s, errorf(tr.T("schema.bad_percent"))
	}
	s.TolerancePercent = &p
	n, err := strconv.Atoi(strings.TrimSpace(sd.count.Text))
	if err != nil {
		return s, errorf(tr.T("schema.bad_count"))
	}
	s.ToleranceCount = &n
	return s, nil
}

// save checks and saves the schema; a problem shows in the dialog, which stays open.
func (sd *schemaDialog) save() {
	s, err := sd.schema()
	if err == nil {
		_, err = sd.u.app.SaveSchema(s)
	}
	if err != nil {
		sd.problem.SetText(sd.u.errorText(err))
		sd.problem.Show()
		return
	}
	sd.problem.Hide()
	sd.d.Hide()
	sd.u.setStatus(sd.u.tr.T("schema.saved", s.Name))
	if sd.saved != nil {
		sd.saved(s)
	}
}

// submitWithSchema submits the CSV file at path with saved schema s and selects its job.
func (u *UI) submitWithSchema(path string, s app.SavedSchema) {
	opts := u.submitOptions()
	go func() {
		ctx, cancel := context.WithTimeout(u.ctx, 30*time.Second)
		defer cancel()
		j, err := u.app.SubmitCSVWithSchema(ctx, path, s, opts)
		u.do(func() {
			if err != nil {
				u.setStatusError(err)
				u.showError(u.tr.T("error.submit_title"), err)
				return
			}
			u.setStatus(u.tr.T("drop.added", 1))
			u.revealJob(j.ID)
		})
	}()
}

func normalEncoding(e string) string {
	switch strings.ToLower(e) {
	case "utf-8-bom", "utf8", "utf-8", "":
		return "utf-8"
	case "cp932", "sjis", "shift-jis", "windows-31j":
		return "shift_jis"
	}
	return strings.ToLower(e)
}

func boldLabel(s string) *widget.Label {
	l := widget.NewLabel(s)
	l.TextStyle = fyne.TextStyle{Bold: true}
	l.Truncation = fyne.TextTruncateEllipsis
	return l
}

// choiceLabel is how value v of a select is shown: its translation under prefix ("" as none).
func choiceLabel(tr *translator, prefix, v string) string {
	if v == "" {
		return tr.T("schema.none")
	}
	return tr.T(prefix + v)
}

// labelsOf is how each of values is shown (choiceLabel).
func labelsOf(tr *translator, prefix string, values []string) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = choiceLabel(tr, prefix, v)
	}
	return out
}

// valueOf is the value of values shown as label (choiceLabel).
func valueOf(tr *translator, prefix string, values []string, label string) string {
	for _, v := range values {
		if choiceLabel(tr, prefix, v) == label {
			return v
		}
	}
	return ""
}
