package checksumfamily

import "jobdesk/app/family"

// ResultView describes a checksum's result: the file's size and its SHA-256.
func (*Family) ResultView() family.ResultView {
	return family.ResultView{
		Counts:     []string{"bytes"},
		Provenance: []string{"sha256"},
		Summary: []family.SummaryFigure{
			{Field: "bytes", Words: "result.bytes"},
			{Field: "sha256", Words: "result.sha256", Digest: true},
		},
	}
}
