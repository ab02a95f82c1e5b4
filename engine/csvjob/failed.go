package csvjob

import "context"

// FailedSummary returns the Summary of execution when its import was refused for too many
// rejected rows (Status FAILED, with the errors file and the report written), else nil: the
// job's result is then empty, but its rejected rows can still be shown and saved.
func (p *Processor) FailedSummary(ctx context.Context, execution string) *Summary {
	dir, err := p.workDir(ctx, execution)
	if err != nil {
		return nil
	}
	s, err := p.recordedSummary(ctx, Run{Execution: execution, Dir: dir})
	if err != nil || s == nil || s.Status != StatusFailed || s.ErrorsCSV == "" {
		return nil
	}
	return s
}
