package docjob

import (
	"sort"
	"strconv"
	"strings"
)

// chartData is what a DrawingML chart part (c:chartSpace) caches of its data: its title, its
// kind and, per series, the name, categories and values as the chart last showed them. Office
// writes these caches into every chart, so they are read without the workbook behind it.
type chartData struct {
	title  string
	kind   string // "Bar chart", "Line chart", …
	cats   []string
	series []chartSeries
}

type chartSeries struct {
	name string
	vals map[int]string // point index → value as cached
}

var chartKinds = map[string]string{
	"barChart": "Bar chart", "bar3DChart": "Bar chart", "lineChart": "Line chart", "line3DChart": "Line chart",
	"pieChart": "Pie chart", "pie3DChart": "Pie chart", "doughnutChart": "Doughnut chart",
	"areaChart": "Area chart", "area3DChart": "Area chart", "scatterChart": "Scatter chart",
	"radarChart": "Radar chart", "bubbleChart": "Bubble chart", "stockChart": "Stock chart",
	"surfaceChart": "Surface chart", "surface3DChart": "Surface chart", "ofPieChart": "Pie chart",
}

// readChart reads a chart part's cached data; nil when root is no chart.
func readChart(root *node) *chartData {
	if cd := readChartEx(root); cd != nil {
		return cd
	}
	cs := find(root, "chart")
	if cs == nil {
		return nil
	}
	cd := &chartData{}
	if t := cs.child("title"); t != nil {
		cd.title = strings.TrimSpace(chartText(t))
	}
	pa := cs.child("plotArea")
	if pa == nil {
		return cd
	}
	catIndex := map[string]int{}
	for _, ct := range pa.kids {
		k, ok := chartKinds[ct.name]
		if !ok {
			continue
		}
		if cd.kind == "" {
			cd.kind = k
		}
		for _, ser := range ct.kids {
			if ser.name != "ser" {
				continue
			}
			s := chartSeries{vals: map[int]string{}}
			if tx := ser.child("tx"); tx != nil {
				s.name = strings.TrimSpace(cachedText(tx))
			}
			cat := ser.child("cat")
			if cat == nil {
				cat = ser.child("xVal")
			}
			pts := cachedPoints(cat)
			val := ser.child("val")
			if val == nil {
				val = ser.child("yVal")
			}
			vals := cachedPoints(val)
			idxs := make([]int, 0, len(vals))
			for idx := range vals {
				idxs = append(idxs, idx)
			}
			sort.Ints(idxs)
			for _, idx := range idxs {
				v := vals[idx]
				c := strconv.Itoa(idx + 1)
				if pts != nil {
					if name, ok := pts[idx]; ok {
						c = name
					}
				}
				i, seen := catIndex[c]
				if !seen {
					i = len(cd.cats)
					catIndex[c] = i
					cd.cats = append(cd.cats, c)
				}
				s.vals[i] = v
			}
			cd.series = append(cd.series, s)
		}
	}
	return cd
}

// chartText is the text of a chart title: rich text runs, or a cached string reference.
func chartText(t *node) string {
	if tx := t.child("tx"); tx != nil {
		if rich := tx.child("rich"); rich != nil {
			return richText(rich)
		}
		return cachedText(tx)
	}
	return ""
}

// richText is a title's rich text: its paragraphs' text, joined by spaces.
func richText(rich *node) string {
	var lines []string
	for _, p := range rich.kids {
		if p.name == "p" {
			lines = append(lines, textOf(p))
		}
	}
	return strings.Join(lines, " ")
}

// cachedText is the first cached value under n (c:strRef/c:strCache/c:pt/c:v) or c:v itself.
func cachedText(n *node) string {
	var out string
	found := false
	walk(n, func(k *node) {
		if !found && k.name == "v" {
			out, found = vText(k), true
		}
	})
	return out
}

// cachedPoints maps point index → cached value of a c:cat / c:val (string or number cache, or a
// multi-level string cache, whose first level is used). nil when n holds no cache.
func cachedPoints(n *node) map[int]string {
	if n == nil {
		return nil
	}
	var out map[int]string
	walk(n, func(k *node) {
		if out != nil || (k.name != "strCache" && k.name != "numCache" && k.name != "lvl" && k.name != "strLit" && k.name != "numLit") {
			return
		}
		m := map[int]string{}
		for _, pt := range k.kids {
			if pt.name != "pt" {
				continue
			}
			idx, err := strconv.Atoi(pt.a("idx"))
			if err != nil || idx < 0 || idx > 1<<20 {
				continue
			}
			if v := pt.child("v"); v != nil {
				m[idx] = vText(v)
				if k.name == "numCache" || k.name == "numLit" {
					m[idx] = cachedNumber(m[idx])
				}
			}
		}
		out = m
	})
	return out
}

// cachedNumber writes a cached number with the 15 significant digits Excel and PowerPoint show:
// the cache holds the double in full (4.4000000000000004 for 4.4). Other text stays as it is.
func cachedNumber(s string) string {
	digits := 0
	for _, r := range s {
		if r == 'e' || r == 'E' {
			break
		}
		if r >= '0' && r <= '9' && (digits > 0 || r != '0') {
			digits++
		}
	}
	if digits <= 15 {
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return strconv.FormatFloat(f, 'g', 15, 64)
}

// vText is the text of a c:v element. parseXML keeps character data only for t-like elements,
// so chart parts are parsed with v counted as one (see parseChartXML).
func vText(v *node) string { return strings.TrimSpace(v.text) }

// markdown writes the chart as a bold line naming its title and kind, and a table with a row
// per category and a column per series.
func (cd *chartData) markdown(b *strings.Builder) {
	kind := cd.kind
	if kind == "" {
		kind = "Chart"
	}
	if cd.title != "" {
		b.WriteString("**" + escapeInline(oneLine(cd.title)) + "** (" + kind + ")\n\n")
	} else {
		b.WriteString("**" + kind + "**\n\n")
	}
	if len(cd.series) == 0 || len(cd.cats) == 0 {
		return
	}
	rows := make([][]string, 0, len(cd.cats)+1)
	header := []string{""}
	for i, s := range cd.series {
		name := s.name
		if name == "" {
			name = "Series " + strconv.Itoa(i+1)
		}
		header = append(header, name)
	}
	rows = append(rows, header)
	for i, c := range cd.cats {
		row := []string{c}
		for _, s := range cd.series {
			row = append(row, s.vals[i])
		}
		rows = append(rows, row)
	}
	writeTextTable(b, rows)
	b.WriteString("\n")
}
