package ui

import (
	"fmt"
	"image/color"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"jobdesk/app"
)

// goalView shows an AI job's goal: its title and deadline, the model usage and cost, the
// sub-goals, actions and tasks as a tree, and a button that draws the 9×9 chart.
func (rv *resultViews) goalView(v app.GoalView) fyne.CanvasObject {
	tr, g := rv.host.tr(), v.Goal
	title := widget.NewLabel(g.Title)
	title.TextStyle.Bold = true
	title.Wrapping = wrapFor(g.Title)
	parts := []fyne.CanvasObject{title}
	if g.Deadline != "" {
		parts = append(parts, widget.NewLabel(tr.T("goal.deadline_is", g.Deadline)))
	}
	if line := usageLine(tr, v.Usage); line != "" {
		l := widget.NewLabel(line)
		l.Wrapping = fyne.TextWrapWord
		parts = append(parts, l)
	}
	actions, tasks := 0, 0
	for _, sg := range g.Subgoals {
		actions += len(sg.Actions)
		for _, a := range sg.Actions {
			tasks += len(a.Tasks)
		}
	}
	counts := widget.NewLabel(tr.T("goal.counts", len(g.Subgoals), actions, tasks))
	chart := widget.NewButtonWithIcon(tr.T("goal.chart"), theme.GridIcon(), func() { rv.showChart(g) })
	parts = append(parts, container.NewBorder(nil, nil, nil, chart, counts), tallBox(goalTree(tr, g), 360))
	return container.NewVBox(parts...)
}

// usageLine is a job's model usage in words: the model, calls, tokens and cost; "" for none.
func usageLine(tr *translator, us app.AIUsage) string {
	if us.Calls == 0 {
		return ""
	}
	s := tr.T("goal.usage", us.Model, groupInt(int64(us.Calls)), groupInt(int64(us.PromptTokens)), groupInt(int64(us.CompletionTokens)))
	if us.CostUSD != nil {
		s += " · " + tr.T("goal.cost", strconv.FormatFloat(*us.CostUSD, 'f', 4, 64))
	}
	return s
}

// goalTree is the goal's sub-goals, their actions and the actions' tasks as a tree, sub-goals
// open.
func goalTree(tr *translator, g app.AIGoal) fyne.CanvasObject {
	kids := map[string][]string{"": {"g"}}
	text := map[string]string{"g": g.Title}
	for _, sg := range g.Subgoals {
		sid := fmt.Sprintf("s%d", sg.ID)
		kids["g"] = append(kids["g"], sid)
		text[sid] = fmt.Sprintf("%d. %s", sg.Position, sg.Title)
		for _, a := range sg.Actions {
			aid := fmt.Sprintf("a%d", a.ID)
			kids[sid] = append(kids[sid], aid)
			kind := a.Type
			if tr.Has("goal.action." + a.Type) {
				kind = tr.T("goal.action." + a.Type)
			}
			text[aid] = fmt.Sprintf("%d-%d. %s（%s）", sg.Position, a.Position, a.Title, kind)
			for _, t := range a.Tasks {
				tid := fmt.Sprintf("t%d", t.ID)
				kids[aid] = append(kids[aid], tid)
				text[tid] = tr.T("goal.task", t.Title, t.EstimatedMinutes)
			}
		}
	}
	tree := widget.NewTree(
		func(id widget.TreeNodeID) []widget.TreeNodeID { return kids[id] },
		func(id widget.TreeNodeID) bool { return len(kids[id]) > 0 || id == "g" },
		func(bool) fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(id widget.TreeNodeID, _ bool, o fyne.CanvasObject) { o.(*widget.Label).SetText(text[id]) })
	tree.OpenBranch("g")
	return tree
}

// showChart draws the 9×9 chart in a dialog almost as large as the window: every cell holds its
// whole title, wrapped; the goal's cell and the sub-goals' centres stand out.
func (rv *resultViews) showChart(g app.AIGoal) {
	c := g.Chart()
	grid := container.New(&chartLayout{})
	for r := 0; r < 9; r++ {
		for k := 0; k < 9; k++ {
			grid.Add(chartCell(c[r][k], r, k))
		}
	}
	d := dialog.NewCustom(rv.host.tr().T("goal.chart_title", g.Title), rv.host.tr().T("dialog.close"), grid, rv.host.window())
	d.Resize(dialogSize(rv.host.window()))
	rv.host.dialogOpened(d)
	d.Show()
}

// chartCell is one cell: a tinted box with the title in small wrapped type. The goal (centre)
// is strongest, a sub-goal (a block's centre or the centre block) tinted, actions plain.
func chartCell(text string, r, k int) fyne.CanvasObject {
	fill := color.NRGBA{0x2E, 0x6B, 0xE6, 0x0F}
	bold := false
	switch {
	case r == 4 && k == 4:
		fill, bold = color.NRGBA{0x2E, 0x6B, 0xE6, 0x66}, true
	case r%3 == 1 && k%3 == 1, r/3 == 1 && k/3 == 1:
		fill, bold = color.NRGBA{0x2E, 0x6B, 0xE6, 0x30}, true
	}
	bg := canvas.NewRectangle(fill)
	bg.CornerRadius = 4
	bg.StrokeColor = color.NRGBA{0x80, 0x80, 0x80, 0x50}
	bg.StrokeWidth = 1
	seg := &widget.TextSegment{Text: text, Style: widget.RichTextStyle{SizeName: theme.SizeNameCaptionText,
		Alignment: fyne.TextAlignCenter, TextStyle: fyne.TextStyle{Bold: bold}}}
	rt := widget.NewRichText(seg)
	rt.Wrapping = fyne.TextWrapBreak
	return container.NewStack(bg, container.New(middleLayout{}, rt))
}

// middleLayout gives its object the whole width and centres it vertically at the height its
// wrapped text needs at that width (a centre layout would shrink wrapped text to one character
// a line).
type middleLayout struct{}

// MinSize is nothing: the cell decides the size.
func (middleLayout) MinSize([]fyne.CanvasObject) fyne.Size { return fyne.NewSize(0, 0) }

// Layout wraps each object to the width and centres it.
func (middleLayout) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objects {
		o.Resize(size)
		h := min(o.MinSize().Height, size.Height)
		o.Move(fyne.NewPos(0, (size.Height-h)/2))
		o.Resize(fyne.NewSize(size.Width, h))
	}
}

// chartLayout lays 81 cells out as a 9×9 grid filling its area, with a wider gap between the
// 3×3 blocks; its minimum keeps every cell wide enough for a few characters a line.
type chartLayout struct{}

const chartGap, chartBlockGap = 2, 8

// MinSize is 9 cells of 84×60 with the gaps.
func (chartLayout) MinSize([]fyne.CanvasObject) fyne.Size {
	return fyne.NewSize(9*84+6*chartGap+2*chartBlockGap, 9*60+6*chartGap+2*chartBlockGap)
}

// Layout places cell r*9+k in row r, column k.
func (chartLayout) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	gaps := float32(6*chartGap + 2*chartBlockGap)
	w, h := (size.Width-gaps)/9, (size.Height-gaps)/9
	offset := func(i int) float32 {
		return float32(i)*chartGap + float32(i/3)*(chartBlockGap-chartGap)
	}
	for i, o := range objects {
		r, k := i/9, i%9
		o.Move(fyne.NewPos(float32(k)*w+offset(k), float32(r)*h+offset(r)))
		o.Resize(fyne.NewSize(w, h))
	}
}

// eligibilityView shows an eligibility extraction as a table of requirements: each group (must,
// needs checking, must not, risks) with its items' keys and texts, the keys not found, and how
// the requirements were found (the model, a fallback, headings only).
func (rv *resultViews) eligibilityView(r app.EligibilityResult) fyne.CanvasObject {
	tr := rv.host.tr()
	parts := []fyne.CanvasObject{}
	level := widget.NewLabel(tr.T(fmt.Sprintf("elig.level.%d", r.FallbackLevel)))
	level.Wrapping = wrapFor(level.Text)
	if r.FallbackLevel >= app.LevelHeadings {
		level.Importance = widget.WarningImportance
	}
	parts = append(parts, level)
	if line := func() string {
		if r.Usage == nil {
			return ""
		}
		return usageLine(tr, *r.Usage)
	}(); line != "" {
		parts = append(parts, widget.NewLabel(line))
	}
	groups := []struct {
		key   string
		items []app.EligibilityItem
	}{{"must", r.Eligibility.Must}, {"need_check", r.Eligibility.NeedCheck}, {"must_not", r.Eligibility.MustNot}, {"risk_flags", r.Eligibility.RiskFlags}}
	for _, g := range groups {
		if len(g.items) == 0 {
			continue
		}
		head := widget.NewLabel(tr.T("elig."+g.key, len(g.items)))
		head.TextStyle.Bold = true
		cells := []fyne.CanvasObject{}
		for _, it := range g.items {
			k := widget.NewLabel(keyWords(tr, it.Key))
			k.TextStyle.Bold = true
			v := widget.NewLabel(it.Text)
			v.Wrapping = wrapFor(it.Text)
			v.Selectable = true
			cells = append(cells, k, v)
		}
		parts = append(parts, head, container.New(layout.NewFormLayout(), cells...))
	}
	if len(r.Eligibility.MissingKeys) > 0 {
		var keys []string
		for _, k := range r.Eligibility.MissingKeys {
			keys = append(keys, keyWords(tr, k))
		}
		l := widget.NewLabel(tr.T("elig.missing", strings.Join(keys, "、")))
		l.Wrapping = wrapFor(l.Text)
		l.Importance = widget.WarningImportance
		parts = append(parts, l)
	}
	return container.NewVBox(parts...)
}

// keyWords is an eligibility key in words ("company_size" → 企業規模), else the key.
func keyWords(tr *translator, key string) string {
	if tr.Has("elig.key." + key) {
		return tr.T("elig.key." + key)
	}
	return key
}
