package convertfamily

import "jobdesk/app/family"

// ResultView describes a document conversion's result (engine/docjob): its pages, characters
// and rows, the Markdown written, how the text was taken out (OCR, damaged pages, notes), the
// entries of an archive, and whether a stored result was reused. Which converter wrote it is
// for support, not for people.
func (*Family) ResultView() family.ResultView {
	return family.ResultView{
		Outcome: []string{"reason"},
		Counts:  []string{"page_count", "extracted_text_length", "rows"},
		Files:   []string{"output_path"},
		Method: []string{"encoding", "extraction_method", "kind", "no_text_pages", "ocr_pages", "damaged_pages",
			"notes", "children"},
		Provenance: []string{"cached", "converter_version", "sha256"},
		Hidden:     []string{"converter_version", "mail"}, // a mail's header has a view of its own
		Summary: []family.SummaryFigure{
			{Field: "page_count", Words: "result.pages"},
			{Field: "extracted_text_length", Words: "result.chars"},
		},
	}
}
