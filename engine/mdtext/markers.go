package mdtext

import "regexp"

// The marker lines a converted document begins each unit of its source with: HTML comments,
// so that no words stand between the words of one page or slide and the next. The converters
// write them, the app starts a section at each, and the window labels each where it shows the
// document.
var (
	// PageMarker matches the line a converted PDF begins each page with ("<!-- Page 3 -->");
	// its submatch is the page's number.
	PageMarker = regexp.MustCompile(`^<!-- Page (\d+) -->$`)
	// SlideMarker matches the line a converted deck begins each slide with ("<!-- Slide 3 -->",
	// "<!-- Slide 3 (hidden) -->"); its submatches are the slide's number and " (hidden)".
	SlideMarker = regexp.MustCompile(`^<!-- Slide (\d+)( \(hidden\))? -->$`)
)
