package app

import (
	"context"
	"fmt"
	"os"
	"sync"

	"jobdesk/assets"
	"jobdesk/engine/flow"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
	"jobdesk/engine/store"
)

// The flow family: the Amazon States Language engine. It owns the schema of state machines and
// executions, loads the shipped workflows, registers the execution orchestrator (and every Lambda
// function the other families registered) with the worker, and adds `jobdesk flow`.
func init() {
	RegisterFamily(Family{
		Name:       "flow",
		Migrations: []store.Migrations{flow.Migrations},
		Open:       openFlow,
		Register: func(a *App, w *queue.Worker) {
			if eng := FlowEngine(a); eng != nil {
				eng.Attach(w)
			}
		},
		Commands: []Command{flowCommand},
		ShowHistory: func(c *CLI, a *App, j job.Job) bool {
			return j.Type == flow.TypeExecution && FlowHistoryOfJob(c, a, j.ID)
		},
		Close: func(a *App) {
			if eng, ok := a.State("flow").(*flow.Engine); ok {
				eng.Close()
			}
		},
	})
}

var flowMu sync.Mutex

// FlowEngine returns the App's workflow engine, creating it on first call, so that families
// whose Open runs before the flow family's can RegisterFunction their handlers. It returns nil
// only when the engine cannot be created (the error is printed).
func FlowEngine(a *App) *flow.Engine {
	flowMu.Lock()
	defer flowMu.Unlock()
	if eng, ok := a.State("flow").(*flow.Engine); ok {
		return eng
	}
	eng, err := flow.New(a.DB, a.Queue, flow.Options{DataDir: a.DataDir(), Blobs: DeviceBlobs(a)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "jobdesk: the workflow engine could not start:", err)
		return nil
	}
	a.SetState("flow", eng)
	return eng
}

// openFlow creates the engine (or reuses it) and loads every shipped workflow. A workflow that
// does not validate is skipped with a warning, so one bad file never stops the app.
func openFlow(a *App) error {
	eng := FlowEngine(a)
	if eng == nil {
		return fmt.Errorf("the workflow engine could not start")
	}
	ctx := context.Background()
	for _, name := range assets.Workflows() {
		def, err := assets.Workflow(name)
		if err != nil {
			continue
		}
		if _, err := eng.PutStateMachine(ctx, name, string(def)); err != nil {
			fmt.Fprintf(os.Stderr, "jobdesk: warning: workflow %s was not loaded: %v\n", name, err)
		}
	}
	return nil
}
