// Package functions is JobDesk's one registry of the Lambda functions its workflows call: each
// name a shipped ASL file names in a Task's Resource (csv-processor, document-converter, the AI
// generation and save steps) mapped to the job.Handler that does the work and to how it should be
// run. The same registry feeds the workflow engine on the device (every function becomes a queue
// job type "lambda:NAME") and the Lambda main in the cloud (one binary serving every function), so
// a workflow calls the very same Go function in both places. A job family adds its functions
// once, where it is wired; nothing else names them.
//
// The package imports only engine/job, so handler packages and the Lambda binary can depend on
// it without linking the queue, SQLite or the UI.
package functions

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"jobdesk/engine/job"
)

// Options say how the device runs a function. The cloud ignores them: there Lambda's own
// timeout and concurrency settings (the deployment template) apply.
type Options struct {
	// Timeout bounds one invocation (0: only the Task's TimeoutSeconds bounds it).
	Timeout time.Duration
	// Visibility is the lease of one invocation on the device queue: a function that reports no
	// progress for this long is presumed dead and runs again (0: the queue's default).
	Visibility time.Duration
	// Concurrency caps how many invocations run at once on the device (0: the worker's limit).
	Concurrency int
	// Waits marks a function that waits on the network or on other jobs rather than using the
	// CPU (an AI call): it takes no CPU-sized worker slot.
	Waits bool
}

// Function is one registered function.
type Function struct {
	Name    string
	Handler job.Handler
	Options Options
}

// Registry maps function names to functions. The zero value is empty and ready; it is safe for
// concurrent use.
type Registry struct {
	mu sync.RWMutex
	m  map[string]Function
}

// New returns a registry holding fs.
func New(fs ...Function) *Registry {
	r := &Registry{}
	r.Add(fs...)
	return r
}

// Add registers fs. A name registered again replaces the earlier function (a test can swap one
// handler); a function without a name or handler is a programming error and panics.
func (r *Registry) Add(fs ...Function) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]Function{}
	}
	for _, f := range fs {
		if f.Name == "" || f.Handler == nil {
			panic(fmt.Sprintf("functions: function %q registered without a name or handler", f.Name))
		}
		r.m[f.Name] = f
	}
}

// Get returns the function registered under name.
func (r *Registry) Get(name string) (Function, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	f, ok := r.m[name]
	return f, ok
}

// Names returns every registered name, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.m))
	for n := range r.m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// All returns every registered function, sorted by name.
func (r *Registry) All() []Function {
	names := r.Names()
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Function, 0, len(names))
	for _, n := range names {
		out = append(out, r.m[n])
	}
	return out
}
