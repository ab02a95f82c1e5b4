package docjob

import (
	"sort"
	"strconv"
	"strings"
)

// chartExKinds names the chart types of Office 2016 (cx:chartSpace, "chartex" parts) by the
// layout of their series.
var chartExKinds = map[string]string{
	"waterfall": "Waterfall chart", "treemap": "Treemap chart", "sunburst": "Sunburst chart",
	"funnel": "Funnel chart", "boxWhisker": "Box and whisker chart", "clusteredColumn": "Histogram",
	"paretoLine": "Pareto chart", "regionMap": "Map chart",
}

// readChartEx reads the cached data of an Office 2016 chart (waterfall, treemap, sunburst,
// funnel, box and whisker, histogram, map): its series point at data blocks (cx:data) whose
// category and value dimensions hold the points as the chart last showed them. nil when root is
// no such chart.
func readChartEx(root *node) *chartData {
	cdata := find(root, "chartData")
	if cdata == nil {
		return nil
	}
	type block struct {
		cats, vals map[int]string
	}
	blocks := map[string]block{}
	for _, d := range cdata.kids {
		if d.name != "data" {
			continue
		}
		var bl block
		for _, dim := range d.kids {
			if dim.name != "strDim" && dim.name != "numDim" {
				continue
			}
			lvl := dim.child("lvl") // the first level: the points themselves
			if lvl == nil {
				continue
			}
			pts := map[int]string{}
			for _, pt := range lvl.kids {
				if pt.name != "pt" {
					continue
				}
				if idx, err := strconv.Atoi(pt.a("idx")); err == nil && idx >= 0 && idx <= 1<<20 {
					v := strings.TrimSpace(pt.text)
					if dim.name == "numDim" {
						v = cachedNumber(v)
					}
					pts[idx] = v
				}
			}
			switch t := dim.a("type"); {
			case t == "cat" && bl.cats == nil:
				bl.cats = pts
			case t != "cat" && bl.vals == nil:
				bl.vals = pts
			}
		}
		blocks[d.a("id")] = bl
	}
	cd := &chartData{}
	ch := find(root, "chart")
	if ch == nil {
		return cd
	}
	if t := ch.child("title"); t != nil {
		cd.title = strings.TrimSpace(chartExText(t))
	}
	catIndex := map[string]int{}
	walk(ch, func(ser *node) {
		if ser.name != "series" {
			return
		}
		if cd.kind == "" {
			cd.kind = chartExKinds[ser.a("layoutId")]
		}
		s := chartSeries{vals: map[int]string{}}
		if tx := ser.child("tx"); tx != nil {
			s.name = strings.TrimSpace(cachedText(tx))
		}
		id := ""
		if di := ser.child("dataId"); di != nil {
			id = di.a("val")
		}
		bl := blocks[id]
		idxs := make([]int, 0, len(bl.vals))
		for idx := range bl.vals {
			idxs = append(idxs, idx)
		}
		sort.Ints(idxs)
		for _, idx := range idxs {
			c := strconv.Itoa(idx + 1)
			if name, ok := bl.cats[idx]; ok && name != "" {
				c = name
			}
			i, seen := catIndex[c]
			if !seen {
				i = len(cd.cats)
				catIndex[c] = i
				cd.cats = append(cd.cats, c)
			}
			s.vals[i] = bl.vals[idx]
		}
		cd.series = append(cd.series, s)
	})
	return cd
}

// chartExText is the text of a cx:title: its rich text runs or its cached text.
func chartExText(t *node) string {
	if rich := find(t, "rich"); rich != nil {
		return richText(rich)
	}
	return cachedText(t)
}
