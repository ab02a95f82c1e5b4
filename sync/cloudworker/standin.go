package cloudworker

import (
	"context"
	"encoding/json"

	"jobdesk/engine/aijob"
	"jobdesk/engine/blob"
	"jobdesk/engine/functions"
	"jobdesk/engine/job"
)

// StandInRegistry is Registry for a Step Functions stand-in (`jobdesk serve`, the tests'
// sfntest): the same functions over b, each invocation's job.Info.Output set to results as
// Invoke sets it in Lambda, so the stand-in's workflows read and write the bucket exactly as the
// deployed functions do.
func StandInRegistry(b blob.Store, results string, provider aijob.Provider) *functions.Registry {
	reg := functions.New()
	for _, f := range Registry(b, results, provider).All() {
		h := f.Handler
		f.Handler = func(ctx context.Context, in json.RawMessage, r job.Reporter) (json.RawMessage, error) {
			info, _ := job.InfoFrom(ctx)
			info.Output = results
			return h(job.WithInfo(ctx, info), in, r)
		}
		reg.Add(f)
	}
	return reg
}
