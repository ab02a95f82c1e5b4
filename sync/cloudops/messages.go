package cloudops

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"jobdesk/engine/job"
)

// Job messages: every job type of the specifications (seed 003 §2–7, seed 002's caption job),
// their queue message schemas, and the common fields (seed 003 §8-1) a hand-sent message gets.

// Kind is a field's JSON type.
type Kind string

// Field kinds.
const (
	KindString  Kind = "string"
	KindBool    Kind = "boolean"
	KindInt     Kind = "integer"
	KindObject  Kind = "object"
	KindStrings Kind = "string list"
)

// Field is one field of a message schema.
type Field struct {
	Name     string   `json:"name"` // dotted for a field of an object: "data.title"
	Kind     Kind     `json:"kind"`
	Required bool     `json:"required,omitempty"`
	Nullable bool     `json:"nullable,omitempty"` // null is accepted
	Enum     []string `json:"enum,omitempty"`     // the values a string may take
}

// Schema is one job type's message.
type Schema struct {
	JobType string `json:"job_type"`
	Title   string `json:"title"`
	TitleJa string `json:"title_ja"`
	// Fields are the job's own fields (the common fields are CommonFields).
	Fields []Field `json:"fields"`
	// OneOf, when set, names fields of which at least one must be present (a file by path or
	// by S3 key).
	OneOf []string `json:"one_of,omitempty"`
}

// CommonFields are every message's (seed 003 §8-1); Prepare fills in those missing.
var CommonFields = []Field{
	{Name: "job_type", Kind: KindString, Required: true},
	{Name: "job_id", Kind: KindString, Required: true},
	{Name: "triggered_at", Kind: KindString, Required: true},
	{Name: "triggered_by", Kind: KindString, Required: true, Enum: []string{"SYSTEM", "USER", "SYNC"}},
	{Name: "user_id", Kind: KindString, Nullable: true},
	{Name: "correlation_id", Kind: KindString, Required: true},
	{Name: "retry_count", Kind: KindInt, Required: true},
}

// Schemas are the job types' messages, by job type.
var Schemas = map[string]Schema{
	"SUBSIDY_SYNC": {JobType: "SUBSIDY_SYNC", Title: "J-Grants incremental sync", TitleJa: "Jグランツ差分取込", Fields: []Field{
		{Name: "params", Kind: KindObject, Required: true},
		{Name: "params.acceptance_only", Kind: KindBool},
		{Name: "params.sort", Kind: KindString},
		{Name: "params.order", Kind: KindString, Enum: []string{"ASC", "DESC"}},
		{Name: "params.limit", Kind: KindInt},
	}},
	"ATTACHMENT_INGEST": {JobType: "ATTACHMENT_INGEST", Title: "Attachment ingest", TitleJa: "添付取込・保存", Fields: []Field{
		{Name: "subsidy_id", Kind: KindString, Required: true},
		{Name: "force", Kind: KindBool},
	}},
	"ATTACHMENT_CONVERT": {JobType: "ATTACHMENT_CONVERT", Title: "Attachment conversion", TitleJa: "添付変換", Fields: []Field{
		{Name: "attachment_id", Kind: KindString, Required: true},
		{Name: "subsidy_id", Kind: KindString, Required: true},
		{Name: "file_type", Kind: KindString, Required: true, Enum: []string{"PDF", "DOCX", "XLSX", "ZIP"}},
		{Name: "s3_path", Kind: KindString, Required: true},
	}},
	"ELIGIBILITY_EXTRACT": {JobType: "ELIGIBILITY_EXTRACT", Title: "Eligibility extraction", TitleJa: "要件JSON抽出", Fields: []Field{
		{Name: "subsidy_id", Kind: KindString, Required: true},
		{Name: "attachment_ids", Kind: KindStrings, Required: true},
		{Name: "path", Kind: KindString},
		{Name: "s3_path", Kind: KindString},
	}},
	"EVALUATION": {JobType: "EVALUATION", Title: "Evaluation", TitleJa: "判定・再評価", Fields: []Field{
		{Name: "trigger", Kind: KindString, Required: true, Enum: []string{"ELIGIBILITY_UPDATE", "COMPANY_UPDATE", "NEW_SUBSIDY"}},
		{Name: "company_ids", Kind: KindStrings},
		{Name: "subsidy_ids", Kind: KindStrings},
		{Name: "force", Kind: KindBool},
	}},
	"NOTIFICATION": {JobType: "NOTIFICATION", Title: "Notification (email, in-app)", TitleJa: "通知送信", Fields: []Field{
		{Name: "notification_type", Kind: KindString, Required: true, Enum: []string{"NEW_MATCH", "DEADLINE_REMINDER", "STATUS_CHANGE", "SYSTEM"}},
		{Name: "user_id", Kind: KindString, Required: true},
		{Name: "company_id", Kind: KindString, Required: true},
		{Name: "subsidy_id", Kind: KindString, Nullable: true},
		{Name: "data", Kind: KindObject, Required: true},
		{Name: "data.title", Kind: KindString, Required: true},
		{Name: "data.message", Kind: KindString, Required: true},
		{Name: "data.action_url", Kind: KindString, Nullable: true},
	}},
	"CAPTION_GENERATION": {JobType: "CAPTION_GENERATION", Title: "Image caption", TitleJa: "説明文生成", Fields: []Field{
		{Name: "path", Kind: KindString},
		{Name: "s3_path", Kind: KindString},
	}, OneOf: []string{"path", "s3_path"}},
}

// JobTypes returns the job types of Schemas, sorted.
func JobTypes() []string {
	out := make([]string, 0, len(Schemas))
	for t := range Schemas {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Template returns a starting body for jobType's message, to be completed by hand: its required
// fields (an enumeration's first value, an empty string, false, 0, an empty object or list) and
// the first of OneOf, without the common fields, which Prepare fills in.
func Template(jobType string) ([]byte, error) {
	s, ok := Schemas[jobType]
	if !ok {
		return nil, unknownJobType(jobType)
	}
	m := map[string]any{}
	put := func(f Field) {
		obj, name := m, f.Name
		for {
			parent, rest, nested := strings.Cut(name, ".")
			if !nested {
				break
			}
			child, _ := obj[parent].(map[string]any)
			if child == nil {
				child = map[string]any{}
				obj[parent] = child
			}
			obj, name = child, rest
		}
		if _, set := obj[name]; set {
			return
		}
		switch {
		case len(f.Enum) > 0:
			obj[name] = f.Enum[0]
		case f.Kind == KindBool:
			obj[name] = false
		case f.Kind == KindInt:
			obj[name] = 0
		case f.Kind == KindObject:
			obj[name] = map[string]any{}
		case f.Kind == KindStrings:
			obj[name] = []string{}
		default:
			obj[name] = ""
		}
	}
	for _, f := range s.Fields {
		if f.Required || (len(s.OneOf) > 0 && f.Name == s.OneOf[0]) {
			put(f)
		}
	}
	return json.MarshalIndent(m, "", "  ")
}

func unknownJobType(jobType string) error {
	return job.Errorf(job.E014, "unknown job type %q; the job types are %s", jobType, strings.Join(JobTypes(), ", ")).
		WithJa(fmt.Sprintf("ジョブ種別 %q はありません。ジョブ種別: %s", jobType, strings.Join(JobTypes(), ", ")))
}

// jobIDPattern is what the cloud worker accepts as a job_id.
var jobIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// PrepareOptions fill in the common fields.
type PrepareOptions struct {
	Now         time.Time // triggered_at (default time.Now)
	TriggeredBy string    // default "USER"
	UserID      string    // user_id when the body has none ("": null)
}

// Prepare returns the message body to send for jobType: body (a JSON object) with the common
// fields it lacks filled in (job_type, job_id and correlation_id as new UUIDs, triggered_at now,
// triggered_by USER, user_id null, retry_count 0), after checking it against the job type's
// schema. A body carrying "input" (the handler's whole input, which JobDesk's cloud worker reads
// first) needs only the common fields. Any mismatch is an E014 naming the field.
func Prepare(jobType string, body []byte, o PrepareOptions) ([]byte, error) {
	s, ok := Schemas[jobType]
	if !ok {
		return nil, unknownJobType(jobType)
	}
	m := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || dec.More() {
		return nil, fieldError(jobType, "", "the message body is not one JSON object", "メッセージ本文が1つのJSONオブジェクトではありません")
	}
	if t, ok := m["job_type"]; ok && t != jobType {
		return nil, fieldError(jobType, "job_type", fmt.Sprintf("is %v, not %s", t, jobType), fmt.Sprintf("が %v で、%s ではありません", t, jobType))
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.TriggeredBy == "" {
		o.TriggeredBy = "USER"
	}
	fill := func(k string, v any) {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	fill("job_type", jobType)
	fill("job_id", newUUID())
	fill("triggered_at", o.Now.UTC().Format(time.RFC3339))
	fill("triggered_by", o.TriggeredBy)
	if o.UserID != "" {
		fill("user_id", o.UserID)
	}
	if !requires(s, "user_id") {
		fill("user_id", nil) // a job that needs a user (NOTIFICATION) must name one
	}
	fill("correlation_id", newUUID())
	fill("retry_count", json.Number("0"))
	if err := Check(s, m); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// requires reports whether s's own fields require name.
func requires(s Schema, name string) bool {
	for _, f := range s.Fields {
		if f.Name == name && f.Required {
			return true
		}
	}
	return false
}

// Check checks message m (decoded with UseNumber) against the common fields and s.
func Check(s Schema, m map[string]any) error {
	fields := CommonFields
	if _, whole := m["input"]; !whole {
		fields = append(append([]Field(nil), CommonFields...), s.Fields...)
	}
	// Every missing field at once, so a body written by hand is mended in one go.
	var missing []string
	absent := map[string]bool{}
	for _, f := range fields {
		if _, present := lookup(m, f.Name); !f.Required || present {
			continue
		}
		absent[f.Name] = true
		if i := strings.LastIndex(f.Name, "."); i > 0 && absent[f.Name[:i]] {
			continue // "data" is missing: not "data.title" as well
		}
		missing = append(missing, strconv.Quote(f.Name))
	}
	if len(missing) > 1 {
		list := strings.Join(missing, ", ")
		return job.Errorf(job.E014, "%s message: fields %s are missing", s.JobType, list).
			WithJa(fmt.Sprintf("%s のメッセージ: 項目 %s がありません。", s.JobType, list))
	}
	for _, f := range fields {
		if err := checkField(s.JobType, f, m); err != nil {
			return err
		}
	}
	if id, _ := m["job_id"].(string); !jobIDPattern.MatchString(id) {
		return fieldError(s.JobType, "job_id", "must be 1–128 letters, digits, - or _", "は英数字・-・_ の1〜128文字にしてください")
	}
	if at, _ := m["triggered_at"].(string); at != "" {
		if _, err := time.Parse(time.RFC3339, at); err != nil {
			return fieldError(s.JobType, "triggered_at", "must be an ISO 8601 time (2026-01-19T09:00:00Z)", "は ISO 8601 の日時（2026-01-19T09:00:00Z）にしてください")
		}
	}
	if n, ok := m["retry_count"].(json.Number); ok {
		if v, err := n.Int64(); err != nil || v < 0 {
			return fieldError(s.JobType, "retry_count", "must be 0 or more", "は0以上にしてください")
		}
	}
	if _, whole := m["input"]; len(s.OneOf) > 0 && !whole {
		for _, k := range s.OneOf {
			if v, ok := m[k]; ok && v != nil {
				return nil
			}
		}
		list := strings.Join(s.OneOf, " or ")
		return fieldError(s.JobType, list, "is missing", "がありません")
	}
	return nil
}

// lookup finds a dotted field; present is false when it (or its object) is absent.
func lookup(m map[string]any, name string) (v any, present bool) {
	parts := strings.Split(name, ".")
	cur := any(m)
	for _, p := range parts {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func checkField(jobType string, f Field, m map[string]any) error {
	v, present := lookup(m, f.Name)
	if !present {
		if f.Required {
			return fieldError(jobType, f.Name, "is missing", "がありません")
		}
		return nil
	}
	if v == nil {
		if f.Nullable || !f.Required {
			return nil
		}
		return fieldError(jobType, f.Name, "must not be null", "は null にできません")
	}
	ok := false
	switch f.Kind {
	case KindString:
		s, isStr := v.(string)
		ok = isStr && (!f.Required || s != "")
	case KindBool:
		_, ok = v.(bool)
	case KindInt:
		n, isNum := v.(json.Number)
		if isNum {
			_, err := n.Int64()
			ok = err == nil
		}
	case KindObject:
		_, ok = v.(map[string]any)
	case KindStrings:
		list, isList := v.([]any)
		ok = isList && (!f.Required || len(list) > 0)
		for _, e := range list {
			if s, isStr := e.(string); !isStr || s == "" {
				ok = false
			}
		}
	}
	if !ok {
		what := string(f.Kind)
		whatJa := map[Kind]string{KindString: "文字列", KindBool: "真偽値", KindInt: "整数", KindObject: "オブジェクト", KindStrings: "文字列のリスト"}[f.Kind]
		if f.Required && (f.Kind == KindString || f.Kind == KindStrings) {
			what, whatJa = "a non-empty "+what, "空でない"+whatJa
		}
		return fieldError(jobType, f.Name, "must be "+what, "は"+whatJa+"にしてください")
	}
	if len(f.Enum) > 0 {
		s := v.(string)
		for _, e := range f.Enum {
			if s == e {
				return nil
			}
		}
		list := strings.Join(f.Enum, ", ")
		return fieldError(jobType, f.Name, fmt.Sprintf("is %q; it must be one of %s", s, list), fmt.Sprintf("が %q です。%s のいずれかにしてください", s, list))
	}
	return nil
}

// fieldError is the E014 of a message field; field "" is the whole message.
func fieldError(jobType, field, en, ja string) error {
	if field == "" {
		return job.Errorf(job.E014, "%s message: %s", jobType, en).WithJa(fmt.Sprintf("%s のメッセージ: %s。", jobType, ja))
	}
	return job.Errorf(job.E014, "%s message: field %q %s", jobType, field, en).
		WithJa(fmt.Sprintf("%s のメッセージ: 項目 %q %s。", jobType, field, ja))
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
