// Package aiblob keeps the AI family's state (aijob.State) as JSON objects in a blob store, for
// a worker without a database: the Lambda worker keeps it under its results prefix in S3. Every
// object is written once under a name no other write uses, atomically (engine/blob), so
// concurrent invocations never overwrite each other and no write needs a lock or a conditional
// put. The device reads these objects back when it fetches a cloud job's results.
//
// Layout under Prefix (e.g. s3://bucket/jobdesk/results/ai); the goals' objects are listed in
// goals.go:
//
//	usage/<job>/<unix-nanos>-<random>-<ok|failed>.json   one aijob.UsageRecord per model call
//	notifications/<unix-nanos>-<id>-<level>.json          one aijob.Notification (ID = id)
//	eligibility/<sha256>.json                             the eligibility cache entry of a document
//
// <job> is the job id the call worked for (0: none), <random> and <id> 16 hex digits / a
// positive 53-bit number from crypto/rand. Names carry what the counting queries need
// (CallOutcomes, AlertsSince), so those list a prefix and read no object.
//
// A goal the cloud did not create (a device's goal id) is not found here: the cloud knows the
// goals its own generations created. Applying these objects to the device's database is the
// device's part.
package aiblob

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"jobdesk/engine/aijob"
	"jobdesk/engine/blob"
)

// Store is the blob-backed goal store, usage log, notifier and eligibility cache.
type Store struct {
	Blob   blob.Store
	Prefix string
}

// New returns the store keeping its objects in b under prefix.
func New(b blob.Store, prefix string) *Store { return &Store{Blob: b, Prefix: prefix} }

// State returns s as every part of aijob.State but the job lineage (a cloud invocation is its
// own job).
func (s *Store) State() aijob.State {
	return aijob.State{Goals: s, Usage: s, Notifier: s, Cache: s}
}

func randomID() int64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return int64(binary.BigEndian.Uint64(b[:]) >> 11) // 53 bits: exact in JSON numbers
}

func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *Store) writeJSON(ctx context.Context, uri string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return blob.WriteAll(ctx, s.Blob, uri, b)
}

// names lists the base names of the objects under prefix/dir/.
func (s *Store) names(ctx context.Context, dir string) ([]string, error) {
	list, err := s.Blob.List(ctx, blob.Join(s.Prefix, dir)+"/")
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list))
	for _, o := range list {
		out = append(out, o.URI[strings.LastIndexAny(o.URI, `/\`)+1:])
	}
	return out, nil
}

// usageRecord is a UsageRecord as stored (latency in milliseconds).
type usageRecord struct {
	JobID            int64    `json:"job_id"`
	Purpose          string   `json:"purpose"`
	Provider         string   `json:"provider"`
	Model            string   `json:"model"`
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
	LatencyMs        int64    `json:"latency_ms"`
	CostUSD          *float64 `json:"cost_usd,omitempty"`
	OK               bool     `json:"ok"`
	At               string   `json:"at"` // RFC 3339 with nanoseconds
}

func outcome(ok bool) string {
	if ok {
		return "ok"
	}
	return "failed"
}

// RecordUsage implements aijob.UsageLog.
func (s *Store) RecordUsage(ctx context.Context, u aijob.UsageRecord) error {
	name := fmt.Sprintf("%019d-%s-%s.json", u.At.UnixNano(), randomHex(), outcome(u.OK))
	return s.writeJSON(ctx, blob.Join(s.Prefix, "usage", strconv.FormatInt(u.JobID, 10), name), usageRecord{
		JobID: u.JobID, Purpose: u.Purpose, Provider: u.Provider, Model: u.Model, PromptTokens: u.PromptTokens,
		CompletionTokens: u.CompletionTokens, LatencyMs: u.Latency.Milliseconds(), CostUSD: u.CostUSD, OK: u.OK,
		At: u.At.UTC().Format(time.RFC3339Nano)})
}

// JobUsage implements aijob.UsageLog: the sums over the job's calls, the cost only when some
// call had one, the greatest model name (as the device's store reports it).
func (s *Store) JobUsage(ctx context.Context, id int64) (aijob.Usage, error) {
	var u aijob.Usage
	recs, err := s.usageRecords(ctx, id)
	if err != nil {
		return u, err
	}
	for _, r := range recs {
		u.Calls++
		u.PromptTokens += r.PromptTokens
		u.CompletionTokens += r.CompletionTokens
		u.LatencyMs += r.LatencyMs
		if r.CostUSD != nil {
			c := *r.CostUSD
			if u.CostUSD != nil {
				c += *u.CostUSD
			}
			u.CostUSD = &c
		}
		if r.Model > u.Model {
			u.Model = r.Model
		}
	}
	return u, nil
}

// UsageRecords returns the model calls recorded for job id, oldest first (the device copies them
// into its own usage log when a cloud job's results come home).
func (s *Store) UsageRecords(ctx context.Context, id int64) ([]aijob.UsageRecord, error) {
	recs, err := s.usageRecords(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]aijob.UsageRecord, 0, len(recs))
	for _, r := range recs {
		at, _ := time.Parse(time.RFC3339Nano, r.At)
		out = append(out, aijob.UsageRecord{JobID: r.JobID, Purpose: r.Purpose, Provider: r.Provider, Model: r.Model,
			PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, Latency: time.Duration(r.LatencyMs) * time.Millisecond,
			CostUSD: r.CostUSD, OK: r.OK, At: at})
	}
	return out, nil
}

// usageRecords reads the model calls recorded for job id in the order of their names (oldest
// first).
func (s *Store) usageRecords(ctx context.Context, id int64) ([]usageRecord, error) {
	dir := blob.Join("usage", strconv.FormatInt(id, 10))
	names, err := s.names(ctx, dir)
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]usageRecord, 0, len(names))
	for _, n := range names {
		b, err := blob.ReadAll(ctx, s.Blob, blob.Join(s.Prefix, dir, n))
		if err != nil {
			return nil, err
		}
		var r usageRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("usage record %s: %w", n, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// CallOutcomes implements aijob.UsageLog from the object names alone.
func (s *Store) CallOutcomes(ctx context.Context, from, to time.Time) (failed, total int, err error) {
	list, err := s.Blob.List(ctx, blob.Join(s.Prefix, "usage")+"/")
	if err != nil {
		return 0, 0, err
	}
	for _, o := range list {
		at, rest, ok := stamp(o.URI)
		if !ok || !at.After(from) || at.After(to) {
			continue
		}
		total++
		if strings.HasSuffix(rest, "-failed.json") {
			failed++
		}
	}
	return failed, total, nil
}

// stamp reads the leading nanosecond timestamp of an object's base name.
func stamp(uri string) (time.Time, string, bool) {
	name := uri[strings.LastIndexAny(uri, `/\`)+1:]
	head, rest, ok := strings.Cut(name, "-")
	if !ok {
		return time.Time{}, "", false
	}
	ns, err := strconv.ParseInt(head, 10, 64)
	if err != nil {
		return time.Time{}, "", false
	}
	return time.Unix(0, ns), rest, true
}

// notification is a Notification as stored.
type notification struct {
	aijob.Notification
	At string `json:"at"`
}

// Notify implements aijob.Notifier; the notification's ID is a random positive 53-bit number.
func (s *Store) Notify(ctx context.Context, n aijob.Notification, at time.Time) error {
	n.ID = randomID()
	name := fmt.Sprintf("%019d-%d-%s.json", at.UnixNano(), n.ID, n.Level)
	return s.writeJSON(ctx, blob.Join(s.Prefix, "notifications", name), notification{n, at.UTC().Format(time.RFC3339Nano)})
}

// Notifications implements aijob.Notifier: newest first.
func (s *Store) Notifications(ctx context.Context) ([]aijob.Notification, error) {
	names, err := s.names(ctx, "notifications")
	if err != nil {
		return nil, err
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	out := make([]aijob.Notification, 0, len(names))
	for _, n := range names {
		b, err := blob.ReadAll(ctx, s.Blob, blob.Join(s.Prefix, "notifications", n))
		if err != nil {
			return nil, err
		}
		var v notification
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("notification %s: %w", n, err)
		}
		out = append(out, v.Notification)
	}
	return out, nil
}

// AlertsSince implements aijob.Notifier from the object names alone.
func (s *Store) AlertsSince(ctx context.Context, t time.Time) (int, error) {
	names, err := s.names(ctx, "notifications")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		if at, rest, ok := stamp(name); ok && at.After(t) && strings.HasSuffix(rest, "-alert.json") {
			n++
		}
	}
	return n, nil
}

// cachedEligibility is a cache entry as stored.
type cachedEligibility struct {
	Eligibility aijob.Eligibility `json:"eligibility"`
	Level       int               `json:"level"`
	At          string            `json:"at"`
}

func (s *Store) eligibilityURI(hash string) string {
	return blob.Join(s.Prefix, "eligibility", hash+".json")
}

// CachedEligibility implements aijob.EligibilityCache.
func (s *Store) CachedEligibility(ctx context.Context, hash string) (aijob.CachedEligibility, bool, error) {
	if !isHex(hash) {
		return aijob.CachedEligibility{}, false, nil
	}
	b, err := blob.ReadAll(ctx, s.Blob, s.eligibilityURI(hash))
	if errors.Is(err, blob.ErrNotExist) {
		return aijob.CachedEligibility{}, false, nil
	}
	if err != nil {
		return aijob.CachedEligibility{}, false, err
	}
	var c cachedEligibility
	if json.Unmarshal(b, &c) != nil {
		return aijob.CachedEligibility{}, false, nil
	}
	at, err := time.Parse(time.RFC3339Nano, c.At)
	if err != nil {
		return aijob.CachedEligibility{}, false, nil
	}
	return aijob.CachedEligibility{Eligibility: c.Eligibility, Level: c.Level, At: at}, true, nil
}

// CacheEligibility implements aijob.EligibilityCache.
func (s *Store) CacheEligibility(ctx context.Context, hash string, c aijob.CachedEligibility) error {
	if !isHex(hash) {
		return fmt.Errorf("eligibility cache: %q is not a hex digest", hash)
	}
	return s.writeJSON(ctx, s.eligibilityURI(hash), cachedEligibility{c.Eligibility, c.Level, c.At.UTC().Format(time.RFC3339Nano)})
}

func isHex(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
