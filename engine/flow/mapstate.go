package flow

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"jobdesk/engine/blob"
	"jobdesk/engine/flow/asl"
)

// itemSource yields a Map's items one by one, so a file of a million rows is never in memory.
type itemSource struct {
	next  func() (any, bool, error)
	close func()
	total int64 // -1 when unknown until the end
}

func arraySource(a []any) itemSource {
	i := 0
	return itemSource{total: int64(len(a)), close: func() {}, next: func() (any, bool, error) {
		if i >= len(a) {
			return nil, false, nil
		}
		i++
		return a[i-1], true, nil
	}}
}

// objectURI turns an ItemReader's or ResultWriter's Bucket and Key into the URI of an object in
// Options.Blobs:
//   - a Bucket with a scheme ("s3://name", "file:///folder"), or named in Options.Buckets (then
//     "s3://" is put in front): the key inside it;
//   - an absolute folder: a path in it; any other Bucket: a folder in the data folder;
//   - no Bucket: Key itself, a URI or a path (relative ones in the data folder).
//
// An absolute Key path ignores a folder Bucket, as before buckets could be S3's.
func (e *Engine) objectURI(bucket, key string) string {
	switch {
	case bucket == "":
		if isURI(key) || filepath.IsAbs(key) {
			return key
		}
		return filepath.Join(e.opts.DataDir, key)
	case isURI(bucket):
		return blob.Join(bucket, key)
	case slices.Contains(e.opts.Buckets, bucket):
		return blob.Join("s3://"+bucket, key)
	case filepath.IsAbs(key):
		return key
	case filepath.IsAbs(bucket):
		return filepath.Join(bucket, key)
	}
	return filepath.Join(e.opts.DataDir, bucket, key)
}

// isURI reports whether s names its scheme ("s3://…", "file://…") rather than being a path.
func isURI(s string) bool {
	return blob.Scheme(s) != "file" || strings.HasPrefix(strings.ToLower(s), "file://")
}

func (e *Engine) readerSource(ctx context.Context, rd *asl.ItemReader, env asl.Env) (itemSource, *asl.Error) {
	pv, err := asl.Template(rd.Parameters, env)
	if err != nil {
		return itemSource{}, fail("States.Runtime", "ItemReader.Parameters: %v", err)
	}
	p, _ := pv.(map[string]any)
	bucket, _ := p["Bucket"].(string)
	key, _ := p["Key"].(string)
	if key == "" {
		return itemSource{}, fail("States.Runtime", "ItemReader.Parameters needs Key (the file to read)")
	}
	f, err := e.opts.Blobs.Open(ctx, e.objectURI(bucket, key))
	if err != nil {
		return itemSource{}, fail("States.ItemReaderFailed", "the item file %s could not be opened: %v", key, err)
	}
	limit := int64(rd.MaxItems)
	count := int64(0)
	src := itemSource{total: -1, close: func() { f.Close() }}
	br := bufio.NewReaderSize(f, 1<<16)
	switch rd.InputType {
	case "CSV":
		// Skip a UTF-8 byte order mark.
		if b, _ := br.Peek(3); len(b) == 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
			br.Discard(3)
		}
		cr := csv.NewReader(br)
		cr.FieldsPerRecord = -1
		cr.ReuseRecord = true
		headers := rd.CSVHeaders
		if rd.CSVHeaderLocation != "GIVEN" {
			rec, err := cr.Read()
			if err != nil {
				f.Close()
				return itemSource{}, fail("States.ItemReaderFailed", "the CSV file %s has no header row: %v", key, err)
			}
			headers = append([]string(nil), rec...)
		}
		src.next = func() (any, bool, error) {
			if limit > 0 && count >= limit {
				return nil, false, nil
			}
			rec, err := cr.Read()
			if err == io.EOF {
				return nil, false, nil
			}
			if err != nil {
				return nil, false, fail("States.ItemReaderFailed", "the CSV file %s could not be read: %v", key, err)
			}
			if len(rec) > len(headers) {
				return nil, false, fail("States.ItemReaderFailed", "row %d of %s has more fields (%d) than the header (%d)", count+1, key, len(rec), len(headers))
			}
			item := make(map[string]any, len(headers))
			for i, h := range headers {
				if i < len(rec) {
					item[h] = rec[i]
				} else {
					item[h] = ""
				}
			}
			count++
			return item, true, nil
		}
	default: // JSON: an array, decoded one element at a time
		dec := json.NewDecoder(br)
		tok, err := dec.Token()
		if d, ok := tok.(json.Delim); err != nil || !ok || d != '[' {
			f.Close()
			return itemSource{}, fail("States.ItemReaderFailed", "the JSON file %s must hold an array", key)
		}
		src.next = func() (any, bool, error) {
			if (limit > 0 && count >= limit) || !dec.More() {
				return nil, false, nil
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, false, fail("States.ItemReaderFailed", "the JSON file %s could not be read: %v", key, err)
			}
			v, err := asl.Decode(raw)
			if err != nil {
				return nil, false, fail("States.ItemReaderFailed", "%v", err)
			}
			count++
			return v, true, nil
		}
	}
	return src, nil
}

// batched groups items of src into {"Items": [...], "BatchInput": ...}.
func batched(src itemSource, b *asl.ItemBatcher, batchInput any) itemSource {
	max := b.MaxItemsPerBatch
	if max <= 0 {
		max = 1 << 30
	}
	out := itemSource{total: -1, close: src.close}
	if src.total >= 0 {
		out.total = (src.total + int64(max) - 1) / int64(max)
	}
	out.next = func() (any, bool, error) {
		var items []any
		size := 0
		for len(items) < max {
			it, ok, err := src.next()
			if err != nil {
				return nil, false, err
			}
			if !ok {
				break
			}
			items = append(items, it)
			if b.MaxInputBytes > 0 {
				size += len(asl.Encode(it))
				if size >= b.MaxInputBytes {
					break
				}
			}
		}
		if len(items) == 0 {
			return nil, false, nil
		}
		batch := map[string]any{"Items": items}
		if batchInput != nil {
			batch["BatchInput"] = batchInput
		}
		return batch, true, nil
	}
	return out
}

// itemResult is a finished iteration, to be recorded.
type itemResult struct {
	idx     int64
	ok      bool
	output  any
	outJSON string // output as JSON (for a failed iteration, {"Error", "Cause"})
	events  []event
	// A DISTRIBUTED iteration's child execution: how it started, and its error.
	started childStart
	errName string
	cause   string
}

// childStart is a DISTRIBUTED iteration that has started: its child execution is listed as
// RUNNING with its input, start time and ExecutionStarted event.
type childStart struct {
	idx   int64
	input string
	start int64
	event event
}

// mapState runs a Map state: every item through the ItemProcessor, at most MaxConcurrency at a
// time, finished iterations recorded so that a resumed execution skips them.
func (r *run) mapState(ctx context.Context, fr *frame, s *asl.State, raw any, cobj map[string]any, key string) (any, *asl.Error) {
	v, err := asl.SelectPathVars(s.InputPath, raw, cobj, fr.vars)
	if err != nil {
		return nil, toASL(err)
	}
	env := asl.Env{Input: v, Context: cobj, Vars: fr.vars}
	distributed := s.ProcessorMode == "DISTRIBUTED"
	var src itemSource
	if s.ItemReader != nil {
		var ferr *asl.Error
		if src, ferr = r.e.readerSource(ctx, s.ItemReader, env); ferr != nil {
			return nil, ferr
		}
	} else {
		var items any = v
		switch {
		case s.JSONata && s.J.Items.Present():
			x, err := s.J.Items.Eval(asl.JVars(fr.vars, raw, cobj, nil, nil, false, false))
			if err != nil {
				return nil, toASL(err)
			}
			if _, ok := x.([]any); !ok {
				return nil, fail("States.QueryEvaluationError", "The JSONata expression '%s' specified for the field 'Items' returned an unexpected result type. Expected 'array', but was '%s' for value: %s",
					s.J.Items.Source(), asl.JTypeName(x), str(x))
			}
			items = x
		case !s.JSONata:
			x, err := env.Lookup(s.ItemsPath)
			if err != nil {
				return nil, toASL(err)
			}
			items = x
		}
		a, ok := items.([]any)
		if !ok {
			return nil, fail("States.Runtime", "Map state input must be an array but was: %s", str(items))
		}
		src = arraySource(a)
	}
	defer src.close()
	if s.ItemBatcher != nil {
		var bi any
		if s.ItemBatcher.BatchInput != nil {
			if bi, err = asl.Template(s.ItemBatcher.BatchInput, env); err != nil {
				return nil, toASL(err)
			}
		}
		src = batched(src, s.ItemBatcher, bi)
	}
	maxConc := s.MaxConcurrency
	if s.MaxConcurrencyPath != "" {
		n, ferr := pathInteger(env, "MaxConcurrencyPath", s.MaxConcurrencyPath)
		if ferr != nil {
			return nil, ferr
		}
		if n < 0 {
			return nil, fail("States.Runtime", "Expected non-negative integer for MaxConcurrency, got '%d' instead.", n)
		}
		maxConc = int(min(n, 1<<31))
	}
	tolCount, tolPct := s.ToleratedFailureCount, s.ToleratedFailurePercentage
	if s.JSONata {
		vs := asl.JVars(fr.vars, raw, cobj, nil, nil, false, false)
		if s.J.MaxConcurrency.Present() {
			f, err := asl.EvalJNumber(s.J.MaxConcurrency, vs, true, 0)
			if err != nil {
				return nil, toASL(err)
			}
			maxConc = int(min(f, 1<<31))
		}
		if s.J.ToleratedFailureCount.Present() {
			f, err := asl.EvalJNumber(s.J.ToleratedFailureCount, vs, true, 0)
			if err != nil {
				return nil, toASL(err)
			}
			tolCount = int64(f)
		}
		if s.J.ToleratedFailurePercentage.Present() {
			f, err := asl.EvalJNumber(s.J.ToleratedFailurePercentage, vs, false, 0)
			if err != nil {
				return nil, toASL(err)
			}
			if f > 100 {
				return nil, fail("States.Runtime", "ToleratedFailurePercentage must be between 0 and 100.")
			}
			tolPct = f
		}
	}
	if s.ToleratedFailureCountPath != "" {
		n, ferr := pathInteger(env, "ToleratedFailureCountPath", s.ToleratedFailureCountPath)
		if ferr != nil {
			return nil, ferr
		}
		if n < 0 {
			return nil, fail("States.Runtime", "ToleratedFailureCount cannot be negative.")
		}
		tolCount = n
	}
	if s.ToleratedFailurePercentagePath != "" {
		x, err := env.Lookup(s.ToleratedFailurePercentagePath)
		if err != nil {
			return nil, toASL(err)
		}
		f, ok := x.(float64)
		if !ok {
			return nil, fail("States.Runtime", "The ToleratedFailurePercentagePath field refers to value \"%s\" which is not a valid float: %s", plain(x), s.ToleratedFailurePercentagePath)
		}
		if f < 0 || f > 100 {
			return nil, fail("States.Runtime", "ToleratedFailurePercentage must be between 0 and 100.")
		}
		tolPct = f
	}
	if maxConc <= 0 || maxConc > 256 {
		maxConc = 256
	}

	// Iterations that finished before a restart (or before a redrive).
	done := map[int64]json.RawMessage{}
	rows, err := r.e.db.R.QueryContext(ctx, `SELECT idx, output FROM flow_map_items WHERE exec_id=? AND map_key=? AND ok=1`, r.execID, key)
	if err == nil {
		for rows.Next() {
			var idx int64
			var out string
			if rows.Scan(&idx, &out) == nil {
				done[idx] = json.RawMessage(out)
			}
		}
		rows.Close()
	}
	// The failed iterations of an earlier try are run again on redrive: forget them.
	r.e.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`DELETE FROM flow_map_items WHERE exec_id=? AND map_key=? AND ok=0`, r.execID, key)
		return err
	})

	var mapRunARN string
	fresh := false // the map run is new: none of its child executions was recorded before
	if distributed {
		mapRunARN = r.e.arn("mapRun", r.smName+"/"+r.name+":"+hashName(r.arn+"/"+key))
		now := time.Now().UnixMilli()
		err := r.e.db.Tx(ctx, func(tx *sql.Tx) error {
			var n int
			if err := tx.QueryRow(`SELECT count(*) FROM flow_map_runs WHERE arn=?`, mapRunARN).Scan(&n); err != nil {
				return err
			}
			fresh = n == 0
			_, err := tx.Exec(`INSERT INTO flow_map_runs(arn, exec_id, map_key, status, max_concurrency, tolerated_pct, tolerated_count, start_date)
				VALUES(?,?,?,'RUNNING',?,?,?,?) ON CONFLICT(arn) DO UPDATE SET status='RUNNING', stop_date=NULL`,
				mapRunARN, r.execID, key, maxConc, tolPct, tolCount, now)
			return err
		})
		if err != nil {
			return nil, fail("States.Runtime", "the map run could not be recorded: %v", err)
		}
		fr.add("MapRunStarted", map[string]any{"mapRunStartedEventDetails": map[string]any{"mapRunArn": mapRunARN}})
	}
	fr.add("MapStateStarted", map[string]any{"mapStateStartedEventDetails": map[string]any{"length": src.total}})

	mctx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(errSiblingFailed) }
	defer cancel()
	var (
		mu                sync.Mutex
		results           []any
		keep              = s.ResultWriter == nil
		succeeded, failed int64
		total             int64
		running           int64
		firstErr          *asl.Error
	)
	rec := &mapRecorder{r: r, key: key, mapRunARN: mapRunARN, distributed: distributed, fresh: fresh, parent: fr}
	// The counters the map run shows, read with the batch they go with (mu held).
	counts := func() mapRunItems {
		return mapRunItems{total: total, succeeded: succeeded, failed: failed, running: running}
	}
	stopRecorder := rec.start(&mu, counts)
	setResult := func(idx int64, v any) {
		if !keep {
			return
		}
		for int64(len(results)) <= idx {
			results = append(results, nil)
		}
		results[idx] = v
	}
	tolerated := func() bool {
		if !distributed {
			return failed == 0
		}
		if tolCount > 0 || tolPct > 0 {
			if tolCount > 0 && failed <= tolCount {
				return true
			}
			if tolPct > 0 && total > 0 && src.total > 0 {
				return float64(failed)*100/float64(src.total) <= tolPct
			}
			if tolPct > 0 && src.total < 0 {
				return true // decided at the end, when the number of items is known
			}
			return false
		}
		return failed == 0
	}
	if src.total > 0 {
		r.mapTotal.Add(src.total)
	}
	sem := make(chan struct{}, maxConc)
	var wg sync.WaitGroup
	// The iterations run on at most maxConc goroutines that take one item after another (sem
	// bounds how many run at once; an item holds its slot from when it is sent until it is
	// recorded). A goroutine kept for the next item keeps the stack the last one grew, which a
	// goroutine per item would grow again each time.
	type mapWork struct {
		i    int64
		item any
	}
	work := make(chan mapWork, maxConc)
	workers := 0
	runItem := func(i int64, item any) {
		defer func() { <-sem; wg.Done() }()
		// A DISTRIBUTED iteration keeps its events for its own child execution's history.
		sub := &frame{prefix: fmt.Sprintf("%s/%d/", key, i), visits: map[string]int{}, quiet: fr.quiet && !distributed, vars: asl.NewScope(fr.vars)}
		start := time.Now().UnixMilli()
		// The context object with $$.Map.Item is what an ItemSelector sees; built only for one.
		var itemCtx map[string]any
		if s.HasItemSelector {
			itemCtx = make(map[string]any, len(cobj)+1)
			for k, v := range cobj {
				itemCtx[k] = v
			}
			itemCtx["Map"] = map[string]any{"Item": map[string]any{"Index": float64(i), "Value": item}}
		}
		in := item
		var ferr *asl.Error
		if s.JSONata && s.HasItemSelector {
			x, err := s.J.ItemSelector.Eval(asl.JVars(fr.vars, raw, itemCtx, nil, nil, false, false))
			if err != nil {
				ferr = toASL(err)
			}
			in = x
		} else if s.HasItemSelector {
			x, err := asl.Template(s.ItemSelector, asl.Env{Input: v, Context: itemCtx, Vars: fr.vars})
			if err != nil {
				ferr = toASL(err)
			}
			in = x
		}
		var started childStart
		if distributed {
			// The child execution is listed as RUNNING from here on.
			inJSON := str(in)
			sub.add("ExecutionStarted", map[string]any{"executionStartedEventDetails": map[string]any{
				"input": inJSON, "inputDetails": map[string]any{"truncated": false}, "roleArn": r.e.defaultRole()}})
			started = childStart{idx: i, input: inJSON, start: start, event: sub.take()[0]}
			started.event.encoded = started.event.detailsJSON()
			mu.Lock()
			running++
			rec.started(started)
			mu.Unlock()
		} else {
			mu.Lock()
			running++
			mu.Unlock()
			sub.add("MapIterationStarted", map[string]any{"mapIterationStartedEventDetails": map[string]any{"name": s.Name, "index": i}})
		}
		var out any
		if ferr == nil {
			out, ferr = r.runMachine(mctx, sub, s.Processor, s.Processor.StartAt, in)
		}
		res := itemResult{idx: i, ok: ferr == nil, output: out, started: started}
		if ferr != nil {
			res.output = map[string]any{"Error": ferr.Name, "Cause": ferr.Cause}
		}
		res.outJSON = str(res.output)
		switch {
		case distributed && ferr != nil:
			res.errName, res.cause = ferr.Name, ferr.Cause
			typ, details := closingEvent(StatusFailed, nil, ferr.Name, ferr.Cause)
			sub.add(typ, details)
		case distributed:
			typ, details := closingEvent(StatusSucceeded, json.RawMessage(res.outJSON), "", "")
			sub.add(typ, details)
		case ferr != nil:
			typ, det := "MapIterationFailed", "mapIterationFailedEventDetails"
			if mctx.Err() != nil {
				typ, det = "MapIterationAborted", "mapIterationAbortedEventDetails"
			}
			sub.add(typ, map[string]any{det: map[string]any{"name": s.Name, "index": i}})
		default:
			sub.add("MapIterationSucceeded", map[string]any{"mapIterationSucceededEventDetails": map[string]any{"name": s.Name, "index": i}})
		}
		res.events = sub.take()
		if distributed {
			encode(res.events) // here, beside the other iterations, not in the recorder's transaction
		}
		mu.Lock()
		defer mu.Unlock()
		running--
		if ferr != nil && mctx.Err() != nil && ferr.Name == "States.Aborted" {
			return // cancelled because another iteration failed: runs again on redrive
		}
		if ferr == nil {
			succeeded++
			setResult(i, out)
		} else {
			failed++
			if firstErr == nil {
				firstErr = ferr
			}
		}
		rec.finished(res)
		r.mapDone.Add(1)
		if !tolerated() {
			cancel()
		}
		r.progress(s.Name)
	}
	var idx int64
	for ; ; idx++ {
		if mctx.Err() != nil {
			break
		}
		item, ok, err := src.next()
		if err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = toASL(err)
			}
			mu.Unlock()
			cancel()
			break
		}
		if !ok {
			break
		}
		mu.Lock()
		total++
		if src.total < 0 {
			r.mapTotal.Add(1)
		}
		mu.Unlock()
		if out, ok := done[idx]; ok {
			val, _ := asl.Decode(out)
			mu.Lock()
			succeeded++
			setResult(idx, val)
			mu.Unlock()
			r.mapDone.Add(1)
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-mctx.Done():
		}
		if mctx.Err() != nil {
			break
		}
		wg.Add(1)
		work <- mapWork{idx, item} // never blocks: each item in the channel holds a slot of sem
		if workers < maxConc {
			workers++
			go func() {
				for w := range work {
					runItem(w.i, w.item)
				}
			}()
		}
	}
	close(work)
	wg.Wait()
	stopRecorder() // every finished iteration is recorded
	mu.Lock()
	defer mu.Unlock()
	if src.total < 0 {
		src.total = total
	}
	var result any = results
	if results == nil {
		result = []any{}
	}
	var ferr *asl.Error
	if ctx.Err() != nil {
		ferr = fail("States.Aborted", "%v", context.Cause(ctx))
	} else if !tolerated() || (firstErr != nil && firstErr.Name == "States.ItemReaderFailed") {
		ferr = firstErr
		if distributed {
			ferr = fail("States.ExceedToleratedFailureThreshold", "%d of %d items failed, more than the tolerated failures (first: %s: %s)",
				failed, total, firstErr.Name, firstErr.Cause)
		}
	}
	if ferr == nil && s.ResultWriter != nil {
		var werr *asl.Error
		result, werr = r.writeResults(ctx, s, env, key, mapRunARN, total)
		if werr != nil {
			ferr = werr
		}
	}
	if distributed {
		status := "SUCCEEDED"
		switch {
		case ctx.Err() != nil:
			status = "ABORTED"
		case ferr != nil:
			status = "FAILED"
		}
		r.e.db.Tx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
			now := time.Now().UnixMilli()
			_, err := tx.Exec(`UPDATE flow_map_runs SET status=?, stop_date=?, total=?, succeeded=?, failed=?, running=0,
				pending=0, aborted=? WHERE arn=?`, status, now, total, succeeded, failed, max(total-succeeded-failed, 0), mapRunARN)
			if err == nil && status != "SUCCEEDED" {
				// Iterations stopped before they finished (another failed, the execution was
				// stopped): their child executions end ABORTED; a redrive runs them again.
				err = r.abortChildren(tx, mapRunARN, now)
			}
			return err
		})
		if ferr != nil {
			fr.add("MapRunFailed", map[string]any{"mapRunFailedEventDetails": map[string]any{"error": ferr.Name, "cause": ferr.Cause}})
		} else {
			fr.add("MapRunSucceeded", nil)
		}
	}
	if ferr != nil {
		fr.add("MapStateFailed", nil)
		return nil, ferr
	}
	fr.add("MapStateSucceeded", nil)
	return result, nil
}

// pathInteger reads an integer through a Map field's path (MaxConcurrencyPath,
// ToleratedFailureCountPath), failing as Step Functions does when the value is not one.
func pathInteger(env asl.Env, field, path string) (int64, *asl.Error) {
	x, err := env.Lookup(path)
	if err != nil {
		return 0, toASL(err)
	}
	f, ok := x.(float64)
	if s, isStr := x.(string); isStr {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		f, ok = float64(n), err == nil
	}
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<62 {
		return 0, fail("States.Runtime", "The %s field refers to value \"%s\" which is not a valid integer: %s", field, plain(x), path)
	}
	return int64(f), nil
}

func toASL(err error) *asl.Error {
	var ae *asl.Error
	if errors.As(err, &ae) {
		return ae
	}
	return fail("States.Runtime", "%v", err)
}

// writeResults writes a Map's results as Step Functions' ResultWriter does: SUCCEEDED_0.json and
// FAILED_0.json (arrays in item order) and manifest.json, in Bucket/Prefix/<map run id>/, and
// returns {"MapRunArn", "ResultWriterDetails": {"Bucket", "Key"}}.
func (r *run) writeResults(ctx context.Context, s *asl.State, env asl.Env, key, mapRunARN string, total int64) (any, *asl.Error) {
	pv, err := asl.Template(s.ResultWriter.Parameters, env)
	if err != nil {
		return nil, toASL(err)
	}
	p, _ := pv.(map[string]any)
	bucket, _ := p["Bucket"].(string)
	prefix, _ := p["Prefix"].(string)
	runID := mapRunARN[strings.LastIndex(mapRunARN, ":")+1:]
	relDir := path.Join(prefix, runID)
	dir := r.e.objectURI(bucket, relDir)
	// Each file is written atomically: a reader sees the whole file or none, never part of it.
	writers := map[int]blob.Writer{}
	sizes := map[int]*countingWriter{}
	bufs := map[int]*bufio.Writer{}
	counts := map[int]int64{}
	names := map[int]string{1: "SUCCEEDED_0.json", 0: "FAILED_0.json"}
	for ok, name := range names {
		w, err := r.e.opts.Blobs.Create(ctx, blob.Join(dir, name))
		if err != nil {
			return nil, fail("States.ResultWriterFailed", "%v", err)
		}
		defer w.Abort()
		sizes[ok] = &countingWriter{w: w}
		writers[ok], bufs[ok] = w, bufio.NewWriter(sizes[ok])
		bufs[ok].WriteString("[")
	}
	rows, err := r.e.db.R.QueryContext(ctx, `SELECT idx, ok, output FROM flow_map_items WHERE exec_id=? AND map_key=? ORDER BY idx`, r.execID, key)
	if err != nil {
		return nil, fail("States.ResultWriterFailed", "%v", err)
	}
	for rows.Next() {
		var idx int64
		var ok int
		var out string
		if err := rows.Scan(&idx, &ok, &out); err != nil {
			rows.Close()
			return nil, fail("States.ResultWriterFailed", "%v", err)
		}
		entry := map[string]any{"Index": idx, "Status": map[int]string{1: "SUCCEEDED", 0: "FAILED"}[ok]}
		if ok == 1 {
			entry["Output"] = out
		} else {
			var eo map[string]any
			json.Unmarshal([]byte(out), &eo)
			entry["Error"], entry["Cause"] = eo["Error"], eo["Cause"]
		}
		if counts[ok] > 0 {
			bufs[ok].WriteString(",")
		}
		bufs[ok].Write(asl.Encode(entry))
		counts[ok]++
	}
	rows.Close()
	manifest := map[string]any{"DestinationBucket": bucket, "MapRunArn": mapRunARN,
		"ResultFiles": map[string]any{"SUCCEEDED": []any{}, "FAILED": []any{}, "PENDING": []any{}}}
	for ok, name := range names {
		bufs[ok].WriteString("]")
		if err := bufs[ok].Flush(); err != nil {
			return nil, fail("States.ResultWriterFailed", "%v", err)
		}
		if err := writers[ok].Commit(); err != nil {
			return nil, fail("States.ResultWriterFailed", "%v", err)
		}
		kind := map[int]string{1: "SUCCEEDED", 0: "FAILED"}[ok]
		manifest["ResultFiles"].(map[string]any)[kind] = []any{map[string]any{"Key": relDir + "/" + name, "Size": sizes[ok].n}}
	}
	if err := blob.WriteAll(ctx, r.e.opts.Blobs, blob.Join(dir, "manifest.json"), asl.Encode(manifest)); err != nil {
		return nil, fail("States.ResultWriterFailed", "%v", err)
	}
	written := counts[0] + counts[1]
	r.e.db.Tx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE flow_map_runs SET results_written=? WHERE arn=?`, written, mapRunARN)
		return err
	})
	return map[string]any{"MapRunArn": mapRunARN, "ResultWriterDetails": map[string]any{"Bucket": bucket, "Key": relDir + "/manifest.json"}}, nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// placeholders returns n "?" separated by commas.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// hashName is a UUID-shaped name derived from s, so the same map run or iteration gets the same
// ARN when an execution resumes or is redriven.
func hashName(s string) string {
	sum := sha256.Sum256([]byte(s))
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
