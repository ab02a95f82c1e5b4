package aiblob

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"sync"
	"time"

	"jobdesk/engine/aijob"
	"jobdesk/engine/blob"
)

// Goals (aijob.GoalStore) under Prefix, one object per piece a handler writes at once, so the
// task workflow's parallel SaveTasks calls (one per action) never write the same object:
//
//	goals/<goal>/goal.json          the goal's own fields and status (goalRecord)
//	goals/<goal>/subgoals.json      its sub-goals in position order, without actions
//	subgoals/<sub-goal>/actions.json {"goal_id", "actions": its actions without tasks}
//	subgoals/<sub-goal>/ref.json    {"goal_id"}: the sub-goal exists
//	actions/<action>/ref.json       {"goal_id", "subgoal_id"}: the action exists
//	actions/<action>/tasks.json     its tasks; present = the action is done
//	actions/<action>/failed.json    its task generation failed (ignored once tasks.json exists)
//
// Ids are random positive 53-bit numbers (crypto/rand): unique without a counter to contend on.
// Replacing a level (regenerate) writes new ids; the objects of the old ones stay unreferenced.

type goalRecord struct {
	ID          int64  `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Deadline    string `json:"deadline,omitempty"`
	Status      string `json:"status"`
	JobID       int64  `json:"job_id,omitempty"`
	CreatedAt   string `json:"created_at"`
}

type subgoalActions struct {
	GoalID  int64          `json:"goal_id"`
	Actions []aijob.Action `json:"actions"`
}

type ref struct {
	GoalID    int64 `json:"goal_id"`
	SubgoalID int64 `json:"subgoal_id,omitempty"`
}

type actionTasks struct {
	Tasks []aijob.Task `json:"tasks"`
}

func id(n int64) string { return strconv.FormatInt(n, 10) }

func (s *Store) goalURI(g int64) string { return blob.Join(s.Prefix, "goals", id(g), "goal.json") }
func (s *Store) subgoalsURI(g int64) string {
	return blob.Join(s.Prefix, "goals", id(g), "subgoals.json")
}
func (s *Store) actionsURI(sg int64) string {
	return blob.Join(s.Prefix, "subgoals", id(sg), "actions.json")
}
func (s *Store) subgoalRefURI(sg int64) string {
	return blob.Join(s.Prefix, "subgoals", id(sg), "ref.json")
}
func (s *Store) actionRefURI(a int64) string {
	return blob.Join(s.Prefix, "actions", id(a), "ref.json")
}
func (s *Store) tasksURI(a int64) string { return blob.Join(s.Prefix, "actions", id(a), "tasks.json") }
func (s *Store) failedURI(a int64) string {
	return blob.Join(s.Prefix, "actions", id(a), "failed.json")
}

// readJSON reads uri into v; found is false when there is no such object.
func (s *Store) readJSON(ctx context.Context, uri string, v any) (found bool, err error) {
	b, err := blob.ReadAll(ctx, s.Blob, uri)
	if errors.Is(err, blob.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, json.Unmarshal(b, v)
}

func (s *Store) goal(ctx context.Context, g int64) (goalRecord, error) {
	var r goalRecord
	found, err := s.readJSON(ctx, s.goalURI(g), &r)
	if err == nil && !found {
		err = aijob.ErrGoalNotFound
	}
	return r, err
}

// CreateGoal implements aijob.GoalStore.
func (s *Store) CreateGoal(ctx context.Context, title, description, deadline string) (int64, error) {
	g := goalRecord{ID: randomID(), Title: title, Description: description, Deadline: deadline, Status: "draft",
		CreatedAt: time.Now().UTC().Format(time.RFC3339Nano)}
	return g.ID, s.writeJSON(ctx, s.goalURI(g.ID), g)
}

// LoadGoal implements aijob.GoalStore: the goal, its sub-goals, their actions (read at once)
// and each action's tasks and status.
func (s *Store) LoadGoal(ctx context.Context, gid int64) (aijob.Goal, error) {
	r, err := s.goal(ctx, gid)
	if err != nil {
		return aijob.Goal{}, err
	}
	g := aijob.Goal{ID: r.ID, Title: r.Title, Description: r.Description, Deadline: r.Deadline, Status: r.Status, JobID: r.JobID}
	if _, err := s.readJSON(ctx, s.subgoalsURI(gid), &g.Subgoals); err != nil {
		return g, err
	}
	var wg sync.WaitGroup
	errs := make([]error, len(g.Subgoals))
	for i := range g.Subgoals {
		wg.Add(1)
		go func(sg *aijob.Subgoal) {
			defer wg.Done()
			errs[i] = s.loadActions(ctx, sg)
		}(&g.Subgoals[i])
	}
	wg.Wait()
	return g, errors.Join(errs...)
}

// loadActions fills sg's actions with their tasks and status.
func (s *Store) loadActions(ctx context.Context, sg *aijob.Subgoal) error {
	var sa subgoalActions
	if _, err := s.readJSON(ctx, s.actionsURI(sg.ID), &sa); err != nil {
		return err
	}
	sg.Actions = sa.Actions
	errs := make([]error, len(sg.Actions))
	var wg sync.WaitGroup
	for i := range sg.Actions {
		wg.Add(1)
		go func(a *aijob.Action) {
			defer wg.Done()
			var at actionTasks
			done, err := s.readJSON(ctx, s.tasksURI(a.ID), &at)
			if err != nil {
				errs[i] = err
				return
			}
			if done {
				a.Tasks, a.Status = at.Tasks, "done"
				return
			}
			if _, err := s.Blob.Stat(ctx, s.failedURI(a.ID)); err == nil {
				a.Status = "failed"
			} else if !errors.Is(err, blob.ErrNotExist) {
				errs[i] = err
			}
		}(&sg.Actions[i])
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ListGoals implements aijob.GoalStore: newest first.
func (s *Store) ListGoals(ctx context.Context) ([]aijob.Goal, error) {
	list, err := s.Blob.List(ctx, blob.Join(s.Prefix, "goals")+"/")
	if err != nil {
		return nil, err
	}
	var recs []goalRecord
	for _, o := range list {
		if len(o.URI) < len("goal.json") || o.URI[len(o.URI)-len("/goal.json"):] != "/goal.json" {
			continue
		}
		var r goalRecord
		if _, err := s.readJSON(ctx, o.URI, &r); err != nil {
			return nil, err
		}
		recs = append(recs, r)
	}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].CreatedAt > recs[j].CreatedAt })
	out := make([]aijob.Goal, len(recs))
	for i, r := range recs {
		out[i] = aijob.Goal{ID: r.ID, Title: r.Title, Description: r.Description, Deadline: r.Deadline, Status: r.Status, JobID: r.JobID}
	}
	return out, nil
}

// updateGoal rewrites goal g through change; change returns false to leave it as it is. The
// workflow steps that change a goal run one after another, so a read-modify-write suffices.
func (s *Store) updateGoal(ctx context.Context, g int64, change func(*goalRecord) bool) (goalRecord, bool, error) {
	r, err := s.goal(ctx, g)
	if errors.Is(err, aijob.ErrGoalNotFound) {
		return r, false, nil // as an UPDATE of no row
	}
	if err != nil || !change(&r) {
		return r, false, err
	}
	return r, true, s.writeJSON(ctx, s.goalURI(g), r)
}

// SetGoalStatus implements aijob.GoalStore.
func (s *Store) SetGoalStatus(ctx context.Context, g int64, status string) error {
	_, _, err := s.updateGoal(ctx, g, func(r *goalRecord) bool { r.Status = status; return true })
	return err
}

// LinkGoalJob implements aijob.GoalStore.
func (s *Store) LinkGoalJob(ctx context.Context, g, jobID int64) error {
	_, _, err := s.updateGoal(ctx, g, func(r *goalRecord) bool {
		if r.JobID != 0 {
			return false
		}
		r.JobID = jobID
		return true
	})
	return err
}

// FailGoal implements aijob.GoalStore.
func (s *Store) FailGoal(ctx context.Context, g int64) (string, bool, error) {
	r, changed, err := s.updateGoal(ctx, g, func(r *goalRecord) bool {
		if r.Status != "draft" && r.Status != "processing" {
			return false
		}
		r.Status = "failed"
		return true
	})
	if !changed || err != nil {
		return "", false, err
	}
	return r.Title, true, nil
}

// hasTasks reports whether some action of goal g has tasks.
func (s *Store) hasTasks(ctx context.Context, g int64) (bool, error) {
	goal, err := s.LoadGoal(ctx, g)
	if err != nil {
		return false, err
	}
	for _, a := range goal.Actions() {
		if len(a.Tasks) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// ReleaseGoal implements aijob.GoalStore.
func (s *Store) ReleaseGoal(ctx context.Context, g int64) error {
	r, err := s.goal(ctx, g)
	if err != nil || r.Status != "processing" {
		return ignoreMissing(err)
	}
	has, err := s.hasTasks(ctx, g)
	if err != nil {
		return err
	}
	status := "draft"
	if has {
		status = "active"
	}
	_, _, err = s.updateGoal(ctx, g, func(r *goalRecord) bool { r.Status = status; return true })
	return err
}

// ClearGoalFailure implements aijob.GoalStore.
func (s *Store) ClearGoalFailure(ctx context.Context, g int64) error {
	r, err := s.goal(ctx, g)
	if err != nil || r.Status != "failed" {
		return ignoreMissing(err)
	}
	if has, err := s.hasTasks(ctx, g); err != nil || has {
		return err
	}
	_, _, err = s.updateGoal(ctx, g, func(r *goalRecord) bool { r.Status = "draft"; return true })
	return err
}

func ignoreMissing(err error) error {
	if errors.Is(err, aijob.ErrGoalNotFound) {
		return nil
	}
	return err
}

// SaveSubgoals implements aijob.GoalStore: the references first, then the list that makes the
// sub-goals part of the goal, in one object.
func (s *Store) SaveSubgoals(ctx context.Context, g, jobID int64, gen []aijob.GenSubgoal, replace bool) error {
	if !replace {
		var old []aijob.Subgoal
		if _, err := s.readJSON(ctx, s.subgoalsURI(g), &old); err != nil || len(old) > 0 {
			return err
		}
	}
	sgs := make([]aijob.Subgoal, len(gen))
	for i, x := range gen {
		sgs[i] = aijob.Subgoal{ID: randomID(), Position: i + 1, Title: x.Title, Description: x.Description, Background: x.Background, JobID: jobID}
		if err := s.writeJSON(ctx, s.subgoalRefURI(sgs[i].ID), ref{GoalID: g}); err != nil {
			return err
		}
	}
	return s.writeJSON(ctx, s.subgoalsURI(g), sgs)
}

// SaveActions implements aijob.GoalStore as SaveSubgoals does.
func (s *Store) SaveActions(ctx context.Context, sg, jobID int64, gen []aijob.GenAction, replace bool) error {
	var owner ref
	found, err := s.readJSON(ctx, s.subgoalRefURI(sg), &owner)
	if err != nil || !found {
		return err // a sub-goal that does not exist gets no actions, as in the database
	}
	if !replace {
		var old subgoalActions
		if _, err := s.readJSON(ctx, s.actionsURI(sg), &old); err != nil || len(old.Actions) > 0 {
			return err
		}
	}
	as := make([]aijob.Action, len(gen))
	for i, x := range gen {
		as[i] = aijob.Action{ID: randomID(), SubgoalID: sg, Position: i + 1, Title: x.Title, Description: x.Description,
			Type: x.Type, Status: "pending", JobID: jobID}
		if err := s.writeJSON(ctx, s.actionRefURI(as[i].ID), ref{GoalID: owner.GoalID, SubgoalID: sg}); err != nil {
			return err
		}
	}
	return s.writeJSON(ctx, s.actionsURI(sg), subgoalActions{GoalID: owner.GoalID, Actions: as})
}

// SaveTasks implements aijob.GoalStore: the tasks and the action's done mark are one object.
func (s *Store) SaveTasks(ctx context.Context, a, jobID int64, gen []aijob.GenTask) ([]int64, error) {
	if _, err := s.Blob.Stat(ctx, s.actionRefURI(a)); errors.Is(err, blob.ErrNotExist) {
		return nil, aijob.ErrActionNotFound
	} else if err != nil {
		return nil, err
	}
	ts := make([]aijob.Task, len(gen))
	ids := make([]int64, len(gen))
	for i, x := range gen {
		ids[i] = randomID()
		ts[i] = aijob.Task{ID: ids[i], Position: i + 1, Title: x.Title, Description: x.Description, Type: x.Type,
			EstimatedMinutes: x.EstimatedMinutes, JobID: jobID}
	}
	if err := s.writeJSON(ctx, s.tasksURI(a), actionTasks{ts}); err != nil {
		return nil, err
	}
	return ids, nil
}

// MarkActionFailed implements aijob.GoalStore.
func (s *Store) MarkActionFailed(ctx context.Context, a int64) error {
	if _, err := s.Blob.Stat(ctx, s.tasksURI(a)); err == nil {
		return nil // done stays done
	} else if !errors.Is(err, blob.ErrNotExist) {
		return err
	}
	return s.writeJSON(ctx, s.failedURI(a), struct {
		At string `json:"at"`
	}{time.Now().UTC().Format(time.RFC3339Nano)})
}

// Seed writes goal g as it stands elsewhere (the device's database) under its own ids, so a
// cloud generation for a goal the device made finds it: the goal, its sub-goals, their actions
// with each one's tasks (done) or failure mark. Objects already there are replaced; objects of
// sub-goals or actions g no longer has stay unreferenced, as after a regeneration.
func (s *Store) Seed(ctx context.Context, g aijob.Goal) error {
	rec := goalRecord{ID: g.ID, Title: g.Title, Description: g.Description, Deadline: g.Deadline, Status: g.Status,
		JobID: g.JobID, CreatedAt: time.Now().UTC().Format(time.RFC3339Nano)}
	if rec.Status == "" {
		rec.Status = "draft"
	}
	var writes []func() error
	put := func(uri string, v any) { writes = append(writes, func() error { return s.writeJSON(ctx, uri, v) }) }
	sgs := make([]aijob.Subgoal, len(g.Subgoals))
	for i, sg := range g.Subgoals {
		as := make([]aijob.Action, len(sg.Actions))
		for j, a := range sg.Actions {
			put(s.actionRefURI(a.ID), ref{GoalID: g.ID, SubgoalID: sg.ID})
			switch {
			case a.Status == "done":
				put(s.tasksURI(a.ID), actionTasks{a.Tasks})
			case a.Status == "failed":
				put(s.failedURI(a.ID), struct {
					At string `json:"at"`
				}{rec.CreatedAt})
			}
			a.Tasks = nil
			as[j] = a
		}
		put(s.subgoalRefURI(sg.ID), ref{GoalID: g.ID})
		if len(as) > 0 {
			put(s.actionsURI(sg.ID), subgoalActions{GoalID: g.ID, Actions: as})
		}
		sg.Actions = nil
		sgs[i] = sg
	}
	if len(sgs) > 0 {
		put(s.subgoalsURI(g.ID), sgs)
	}
	// The references and the parts first, then the goal that makes them reachable.
	const parallel = 16
	sem := make(chan struct{}, parallel)
	errs := make([]error, len(writes))
	var wg sync.WaitGroup
	for i, w := range writes {
		wg.Add(1)
		sem <- struct{}{}
		go func() { defer wg.Done(); errs[i] = w(); <-sem }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return s.writeJSON(ctx, s.goalURI(g.ID), rec)
}
