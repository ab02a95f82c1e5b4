package convertfamily

import (
	"encoding/json"
	"strings"
	"testing"

	"jobdesk/app/family"
)

// The page limit set in the window's documents page (run option "max-pages") reaches the
// converter's input and the workflow's, whose Tasks pass it on to ZIP entries too.
func TestMaxPagesReachesTheWorkflow(t *testing.T) {
	in := input("/data/report.pdf", family.SubmitOptions{Extra: map[string]string{"max-pages": "10", "no-ocr": "true"}})
	if in.MaxPages != 10 || !in.NoOCR {
		t.Fatalf("input %+v", in)
	}
	b, _ := json.Marshal(in.WorkflowInput(in.Path))
	if !strings.Contains(string(b), `"max_pages":10`) {
		t.Fatalf("workflow input %s", b)
	}
	if d := input("/data/report.pdf", family.SubmitOptions{}); d.MaxPages != 0 {
		t.Fatalf("default input %+v", d)
	}
	b, _ = json.Marshal(input("/a.pdf", family.SubmitOptions{}).WorkflowInput("/a.pdf"))
	if !strings.Contains(string(b), `"max_pages":0`) {
		t.Fatalf("the workflow reads $.max_pages, so the field is always there: %s", b)
	}
}
