package flow

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A Map's records are written when recordBatch are waiting, or when the time since the last
// write reaches an interval that starts at recordFirst and doubles up to recordEvery. A batch's
// child executions land at random places of the index of execution ARNs (their names are
// UUIDs): a small batch writes nearly one index page per child, a larger one shares pages, and
// no batch writes a page twice, so fewer, larger batches write fewer pages (a Map of 10,000
// items wrote 5,900 to 7,600 pages of that index in batches of 2,048 records or 250 ms, 3,300
// in batches of 8,192 or a second). The first writes come early so that a short Map shows its
// items' progress too. A child execution is listed within a second of its start or end.
const (
	recordBatch = 8192
	recordFirst = 250 * time.Millisecond
	recordEvery = time.Second
)

// recordBlocks are the numbers of rows a statement of the Map's records writes: a batch is
// written in blocks of these sizes, largest first, each statement prepared once per engine
// (recordStmts) instead of parsed for every batch.
var recordBlocks = [...]int{256, 64, 16, 4, 1}

// recordStmts are the Map records' statements, one per block size (recordBlocks), prepared on
// the writer connection. A nil statement (its preparation failed) is parsed on each use.
type recordStmts struct {
	items, starts, ends, clear [len(recordBlocks)]*sql.Stmt
	// firsts insert child executions recorded for the first time (endsInsert).
	firsts [len(recordBlocks)]*sql.Stmt
	// history inserts historyBlocks[k] events.
	history [len(historyBlocks)]*sql.Stmt
}

// historyBlocks are the numbers of events a history statement inserts (the first is
// historyPerStatement).
var historyBlocks = [...]int{historyPerStatement, 100, 25, 5, 1}

func itemsInsert(n int) string {
	return `INSERT OR REPLACE INTO flow_map_items(exec_id, map_key, idx, ok, output) VALUES ` +
		strings.Repeat("(?,?,?,?,?),", n-1) + "(?,?,?,?,?)"
}

func startsUpsert(n int) string {
	return `INSERT INTO flow_executions(arn, name, sm_arn, definition, status, input, start_date, map_run_arn, last_event_id) VALUES ` +
		strings.Repeat(`(?,?,?,'','RUNNING',?,?,?,1),`, n-1) + `(?,?,?,'','RUNNING',?,?,?,1)` +
		` ON CONFLICT(arn) DO UPDATE SET status='RUNNING', input=excluded.input, output=NULL, error='', cause='',
		start_date=excluded.start_date, stop_date=NULL, last_event_id=1 RETURNING id, arn`
}

func endsUpsert(n int) string {
	return `INSERT INTO flow_executions(arn, name, sm_arn, definition, status, input, output, error, cause,
		start_date, stop_date, map_run_arn, last_event_id) VALUES ` +
		strings.Repeat(`(?,?,?,'',?,?,?,?,?,?,?,?,?),`, n-1) + `(?,?,?,'',?,?,?,?,?,?,?,?,?)` +
		` ON CONFLICT(arn) DO UPDATE SET status=excluded.status, input=excluded.input, output=excluded.output,
		error=excluded.error, cause=excluded.cause, start_date=excluded.start_date, stop_date=excluded.stop_date,
		last_event_id=excluded.last_event_id RETURNING id, arn`
}

// endsInsert is endsUpsert of child executions never recorded before: a plain insert, whose
// rows take consecutive ids (each the table's largest plus one), so that it need not return
// them.
func endsInsert(n int) string {
	return `INSERT INTO flow_executions(arn, name, sm_arn, definition, status, input, output, error, cause,
		start_date, stop_date, map_run_arn, last_event_id) VALUES ` +
		strings.Repeat(`(?,?,?,'',?,?,?,?,?,?,?,?,?),`, n-1) + `(?,?,?,'',?,?,?,?,?,?,?,?,?)`
}

func historyClear(n int) string {
	return `DELETE FROM flow_history WHERE exec_id IN (SELECT id FROM flow_executions WHERE arn IN (` + placeholders(n) + `))`
}

// recordStatements returns the engine's prepared record statements, preparing them on first
// use. It is called outside any write transaction: preparing waits for the writer connection.
func (e *Engine) recordStatements() *recordStmts {
	e.recordMu.Lock()
	defer e.recordMu.Unlock()
	if e.record != nil {
		return e.record
	}
	rs := &recordStmts{}
	prep := func(q string) *sql.Stmt {
		st, err := e.db.W.Prepare(q)
		if err != nil {
			return nil
		}
		return st
	}
	for k, n := range recordBlocks {
		rs.items[k] = prep(itemsInsert(n))
		rs.starts[k] = prep(startsUpsert(n))
		rs.ends[k] = prep(endsUpsert(n))
		rs.clear[k] = prep(historyClear(n))
		rs.firsts[k] = prep(endsInsert(n))
	}
	rs.history[0] = e.historyFull
	for k := 1; k < len(historyBlocks); k++ {
		rs.history[k] = prep(historyInsert(historyBlocks[k]))
	}
	e.record = rs
	return rs
}

// inTx returns st for use in tx, or nil when st is nil.
func inTx(tx *sql.Tx, st *sql.Stmt) *sql.Stmt {
	if st == nil {
		return nil
	}
	return tx.Stmt(st)
}

// execIn runs the statement st (in tx), or the query text when st is nil.
func execIn(tx *sql.Tx, st *sql.Stmt, query func() string, args []any) error {
	var err error
	if st = inTx(tx, st); st != nil {
		_, err = st.Exec(args...)
	} else {
		_, err = tx.Exec(query(), args...)
	}
	return err
}

// mapRunItems are the item counters of a map run at one moment.
type mapRunItems struct{ total, succeeded, failed, running int64 }

// mapRecorder writes a Map's records in batches, one transaction each, from one goroutine and
// in order, off the iterations' path: the finished iterations (flow_map_items, so that a
// resumed execution skips them) and, for a DISTRIBUTED Map, its child executions as they start
// (listed RUNNING) and as they end, with their histories and the map run's counters. An
// INLINE Map's iteration events join the parent's history once their iterations are recorded.
//
// Nothing here decides what runs again after a kill: an iteration not yet recorded runs again
// on resume, and finds its finished tasks by their dedup keys instead of running them again.
type mapRecorder struct {
	r           *run
	key         string
	mapRunARN   string
	distributed bool
	// fresh is set for a new map run (not resumed, not redriven): a child execution whose
	// start was not written (startWritten, the writer's goroutine only) is recorded for the
	// first time when it ends, with nothing to replace.
	fresh        bool
	startWritten map[int64]bool
	parent       *frame

	// Held in the Map's own mutex (passed to start).
	starts []childStart
	ends   []itemResult
	kick   chan struct{}
}

// started records that an iteration began (the Map's mutex held).
func (m *mapRecorder) started(c childStart) {
	m.starts = append(m.starts, c)
	m.nudge()
}

// finished records a finished iteration (the Map's mutex held).
func (m *mapRecorder) finished(it itemResult) {
	m.ends = append(m.ends, it)
	m.nudge()
}

func (m *mapRecorder) nudge() {
	if len(m.starts)+len(m.ends) >= recordBatch {
		select {
		case m.kick <- struct{}{}:
		default:
		}
	}
}

// start runs the writer; mu is the Map's mutex, counts reads its counters (mu held). The
// returned function writes what is left and waits for the writer to end.
func (m *mapRecorder) start(mu *sync.Mutex, counts func() mapRunItems) (stop func()) {
	m.kick = make(chan struct{}, 1)
	end := make(chan struct{})
	finished := make(chan struct{})
	write := func() {
		mu.Lock()
		starts, ends, n := m.starts, m.ends, counts()
		m.starts, m.ends = nil, nil
		mu.Unlock()
		if len(starts) > 0 || len(ends) > 0 {
			m.write(starts, ends, n)
		}
	}
	go func() {
		defer close(finished)
		every := recordFirst
		t := time.NewTimer(every)
		defer t.Stop()
		for {
			select {
			case <-m.kick:
			case <-t.C:
			case <-end:
				write()
				return
			}
			write()
			every = min(2*every, recordEvery)
			t.Reset(every)
		}
	}()
	return func() {
		close(end)
		<-finished
	}
}

// write records one batch in one transaction: everything waiting, so that a child's start is
// never written after its end. A child that started and ended within the batch is written
// once, closed. A failure to write is not the Map's failure: the iterations not recorded run
// again (without re-running their finished tasks) on resume.
func (m *mapRecorder) write(starts []childStart, ends []itemResult, n mapRunItems) {
	r := m.r
	rs := r.e.recordStatements()
	var open []childStart
	err := r.e.db.Tx(context.Background(), func(tx *sql.Tx) error {
		if m.distributed {
			ended := make(map[int64]bool, len(ends))
			for _, it := range ends {
				ended[it.idx] = true
			}
			open = starts[:0:0]
			for _, c := range starts {
				if !ended[c.idx] {
					open = append(open, c)
				}
			}
			if err := inBlocks(len(open), func(k, i, j int) error { return r.recordStarts(tx, rs, k, m.mapRunARN, open[i:j]) }); err != nil {
				return err
			}
		}
		h := r.e.newHistoryWriter(tx, rs)
		var args []any
		err := inBlocks(len(ends), func(b, i, j int) error {
			args = args[:0]
			for _, it := range ends[i:j] {
				ok := 0
				if it.ok {
					ok = 1
				}
				args = append(args, r.execID, m.key, it.idx, ok, it.outJSON)
			}
			return execIn(tx, rs.items[b], func() string { return itemsInsert(j - i) }, args)
		})
		if err != nil || !m.distributed {
			return err
		}
		// The children recorded for the first time, then those replacing a record.
		var firsts, again []itemResult
		for _, it := range ends {
			if m.fresh && !m.startWritten[it.idx] {
				firsts = append(firsts, it)
			} else {
				again = append(again, it)
			}
		}
		if err := inBlocks(len(firsts), func(k, i, j int) error { return r.recordFirsts(tx, rs, k, h, m.mapRunARN, firsts[i:j]) }); err != nil {
			return err
		}
		if err := inBlocks(len(again), func(k, i, j int) error { return r.recordEnds(tx, rs, k, h, m.mapRunARN, again[i:j]) }); err != nil {
			return err
		}
		if err := h.flush(); err != nil {
			return err
		}
		_, err = tx.Exec(`UPDATE flow_map_runs SET total=?, succeeded=?, failed=?, running=?, pending=max(?-?-?-?,0) WHERE arn=?`,
			n.total, n.succeeded, n.failed, n.running, n.total, n.succeeded, n.failed, n.running, m.mapRunARN)
		return err
	})
	if err == nil && m.fresh && len(open) > 0 {
		if m.startWritten == nil {
			m.startWritten = map[int64]bool{}
		}
		for _, c := range open {
			m.startWritten[c.idx] = true
		}
	}
	if !m.distributed && len(ends) > 0 {
		var evs []event
		for _, it := range ends {
			evs = append(evs, it.events...)
		}
		m.parent.merge(inTimeOrder(evs))
	}
}

// inBlocks calls write for consecutive ranges [i, j) of n rows, each of a size of
// recordBlocks (the k-th), largest first.
func inBlocks(n int, write func(k, i, j int) error) error {
	i := 0
	for k, size := range recordBlocks {
		for ; n-i >= size; i += size {
			if err := write(k, i, i+size); err != nil {
				return err
			}
		}
	}
	return nil
}

// childARN is the ARN of the child execution of map run item idx: derived from the map run
// and the index, so an iteration run again (resume, redrive) keeps its record.
func (r *run) childARN(mapRunARN string, idx int64) string {
	return r.e.arn("execution", r.smName+"/"+r.name+":"+hashName(mapRunARN+"/"+strconv.FormatInt(idx, 10)))
}

// clearChildren returns the ARNs of the child executions of n iterations of the map run (the
// k-th is iteration idx(k)) and each ARN's k, having deleted the histories they had: an
// iteration recorded again replaces its earlier record and history.
func (r *run) clearChildren(tx *sql.Tx, clear *sql.Stmt, mapRunARN string, n int, idx func(k int) int64) ([]any, map[string]int, error) {
	arns := make([]any, n)
	row := make(map[string]int, n) // ARN → k
	for k := range n {
		arn := r.childARN(mapRunARN, idx(k))
		arns[k] = arn
		row[arn] = k
	}
	if err := execIn(tx, clear, func() string { return historyClear(n) }, arns); err != nil {
		return nil, nil, err
	}
	return arns, row, nil
}

// recordStarts lists started DISTRIBUTED iterations as RUNNING child executions of the map
// run, as Step Functions does (ListExecutions by mapRunArn, DescribeExecution,
// GetExecutionHistory). An iteration run again replaces its earlier record and history.
// The starts are one block (recordBlocks[b]) of rows.
func (r *run) recordStarts(tx *sql.Tx, rs *recordStmts, b int, mapRunARN string, starts []childStart) error {
	if len(starts) == 0 {
		return nil
	}
	label := r.smName + "/" + r.name
	smARN := r.e.arn("stateMachine", label)
	arns, row, err := r.clearChildren(tx, rs.clear[b], mapRunARN, len(starts), func(k int) int64 { return starts[k].idx })
	if err != nil {
		return err
	}
	args := make([]any, 0, 6*len(starts))
	for k, c := range starts {
		arn := arns[k].(string)
		args = append(args, arn, arn[strings.LastIndexByte(arn, ':')+1:], smARN, c.input, c.start, mapRunARN)
	}
	ids, err := returnedIDs(tx, rs.starts[b], func() string { return startsUpsert(len(starts)) }, args, row)
	if err != nil {
		return err
	}
	h := r.e.newHistoryWriter(tx, rs)
	for k, c := range starts {
		if err := h.add(ids[k], 1, c.event); err != nil {
			return err
		}
	}
	return h.flush()
}

// recordEnds writes the child executions of finished DISTRIBUTED iterations, closed, with
// their whole histories (replacing what their start wrote, or an earlier run's record).
// The ends are one block (recordBlocks[b]) of rows; their events go to h.
func (r *run) recordEnds(tx *sql.Tx, rs *recordStmts, b int, h *historyWriter, mapRunARN string, ends []itemResult) error {
	if len(ends) == 0 {
		return nil
	}
	label := r.smName + "/" + r.name
	smARN := r.e.arn("stateMachine", label)
	now := time.Now().UnixMilli()
	arns, row, err := r.clearChildren(tx, rs.clear[b], mapRunARN, len(ends), func(k int) int64 { return ends[k].idx })
	if err != nil {
		return err
	}
	args := make([]any, 0, 12*len(ends))
	for k, it := range ends {
		arn := arns[k].(string)
		args = append(args, arn, arn[strings.LastIndexByte(arn, ':')+1:], smARN)
		args = appendEnd(args, it, now, mapRunARN)
	}
	ids, err := returnedIDs(tx, rs.ends[b], func() string { return endsUpsert(len(ends)) }, args, row)
	if err != nil {
		return err
	}
	for k, it := range ends {
		if err := addChildHistory(h, ids[k], it); err != nil {
			return err
		}
	}
	return nil
}

// recordFirsts is recordEnds of child executions recorded for the first time (a fresh map run,
// their start not written): inserted, with no history to clear.
func (r *run) recordFirsts(tx *sql.Tx, rs *recordStmts, b int, h *historyWriter, mapRunARN string, ends []itemResult) error {
	if len(ends) == 0 {
		return nil
	}
	label := r.smName + "/" + r.name
	smARN := r.e.arn("stateMachine", label)
	now := time.Now().UnixMilli()
	args := make([]any, 0, 12*len(ends))
	for _, it := range ends {
		arn := r.childARN(mapRunARN, it.idx)
		args = append(args, arn, arn[strings.LastIndexByte(arn, ':')+1:], smARN)
		args = appendEnd(args, it, now, mapRunARN)
	}
	var res sql.Result
	var err error
	if st := inTx(tx, rs.firsts[b]); st != nil {
		res, err = st.Exec(args...)
	} else {
		res, err = tx.Exec(endsInsert(len(ends)), args...)
	}
	if err != nil {
		return err
	}
	last, err := res.LastInsertId()
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != int64(len(ends)) {
		return fmt.Errorf("recorded %d of %d child executions", n, len(ends))
	}
	for k, it := range ends {
		if err := addChildHistory(h, last-int64(len(ends)-1-k), it); err != nil {
			return err
		}
	}
	return nil
}

// appendEnd appends the columns of a closed child execution after its arn, name and state
// machine (status … last_event_id of endsUpsert and endsInsert).
func appendEnd(args []any, it itemResult, now int64, mapRunARN string) []any {
	status, output := StatusSucceeded, sql.NullString{String: it.outJSON, Valid: true}
	if !it.ok {
		status, output = StatusFailed, sql.NullString{}
	}
	return append(args, status, it.started.input, output, it.errName, it.cause, it.started.start, now, mapRunARN, 1+len(it.events))
}

// addChildHistory queues the whole history of the closed child execution id.
func addChildHistory(h *historyWriter, id int64, it itemResult) error {
	if err := h.add(id, 1, it.started.event); err != nil {
		return err
	}
	for j, ev := range it.events {
		if err := h.add(id, int64(j+2), ev); err != nil {
			return err
		}
	}
	return nil
}

// abortChildren ends the map run's child executions still RUNNING as ABORTED, each with an
// ExecutionAborted event.
func (r *run) abortChildren(tx *sql.Tx, mapRunARN string, now int64) error {
	rows, err := tx.Query(`UPDATE flow_executions SET status='ABORTED', error='States.Aborted', cause='the map run ended before this iteration finished',
		stop_date=?, last_event_id=last_event_id+1 WHERE map_run_arn=? AND status='RUNNING' RETURNING id, last_event_id`, now, mapRunARN)
	if err != nil {
		return err
	}
	type closed struct{ id, last int64 }
	var cs []closed
	for rows.Next() {
		var c closed
		if err := rows.Scan(&c.id, &c.last); err != nil {
			rows.Close()
			return err
		}
		cs = append(cs, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	h := r.e.newHistoryWriter(tx, nil)
	for _, c := range cs {
		typ, details := closingEvent(StatusAborted, nil, "States.Aborted", "the map run ended before this iteration finished")
		if err := h.add(c.id, c.last, event{typ: typ, at: now, details: details}); err != nil {
			return err
		}
	}
	return h.flush()
}

// returnedIDs runs a statement (st, or the query text when st is nil) whose RETURNING gives
// (id, arn) and places each id by row[arn].
func returnedIDs(tx *sql.Tx, st *sql.Stmt, query func() string, args []any, row map[string]int) ([]int64, error) {
	var rows *sql.Rows
	var err error
	if st = inTx(tx, st); st != nil {
		rows, err = st.Query(args...)
	} else {
		rows, err = tx.Query(query(), args...)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := make([]int64, len(row))
	for rows.Next() {
		var id int64
		var arn string
		if err := rows.Scan(&id, &arn); err != nil {
			return nil, err
		}
		if k, ok := row[arn]; ok {
			ids[k] = id
		}
	}
	return ids, rows.Err()
}

// historyWriter inserts history events of several executions, a few hundred per statement.
type historyWriter struct {
	tx *sql.Tx
	// stmts insert historyBlocks[k] events (nil: each statement is parsed); inTx are those
	// taken into tx so far.
	stmts [len(historyBlocks)]*sql.Stmt
	inTx  [len(historyBlocks)]*sql.Stmt
	args  []any
	n     int
}

const historyPerStatement = 400

// newHistoryWriter returns a writer for tx using the prepared statements of rs (nil: only the
// engine's full-block statement is prepared).
func (e *Engine) newHistoryWriter(tx *sql.Tx, rs *recordStmts) *historyWriter {
	h := &historyWriter{tx: tx} // args grow with the events added (often a handful)
	if rs != nil {
		h.stmts = rs.history
	} else {
		h.stmts[0] = e.historyFull
	}
	return h
}

// historyInsert is the statement inserting n events.
func historyInsert(n int) string {
	return `INSERT INTO flow_history(exec_id, event_id, prev_id, type, at, details) VALUES ` +
		strings.Repeat("(?,?,?,?,?,?),", n-1) + "(?,?,?,?,?,?)"
}

// add queues event id of execution execID (following id-1).
func (h *historyWriter) add(execID, id int64, ev event) error {
	h.args = append(h.args, execID, id, id-1, ev.typ, ev.at, ev.detailsJSON())
	if h.n++; h.n == historyPerStatement {
		return h.flush()
	}
	return nil
}

// flush inserts the queued events, in blocks of historyBlocks (the rest in one statement
// parsed, from the first block size without a prepared statement on).
func (h *historyWriter) flush() error {
	i := 0
	for k, size := range historyBlocks {
		if h.stmts[k] == nil && h.n > i {
			size = h.n - i
		}
		for ; h.n-i >= size; i += size {
			args := h.args[6*i : 6*(i+size)]
			var err error
			if h.stmts[k] == nil {
				_, err = h.tx.Exec(historyInsert(size), args...)
			} else {
				if h.inTx[k] == nil {
					h.inTx[k] = h.tx.Stmt(h.stmts[k])
				}
				_, err = h.inTx[k].Exec(args...)
			}
			if err != nil {
				h.args, h.n = h.args[:0], 0
				return err
			}
		}
	}
	h.args, h.n = h.args[:0], 0
	return nil
}
