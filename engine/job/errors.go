package job

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Code is a JobDesk error code. E001–E012 come from the seeds; E013–E016 are JobDesk's own.
type Code string

// Error codes. Retryable says what a retry can do by default; an Error may override it.
const (
	E001 Code = "E001" // API connection error (retry)
	E002 Code = "E002" // API rate limit (wait, retry)
	E003 Code = "E003" // file too large (skip, log)
	E004 Code = "E004" // invalid or damaged file, unsupported type (skip, log)
	E005 Code = "E005" // password-protected (skip, tell the user)
	E006 Code = "E006" // text extraction or validation failed (fallback)
	E007 Code = "E007" // AI model error (retry, other model)
	E008 Code = "E008" // reply not valid JSON / not the schema (fallback)
	E009 Code = "E009" // database error (retry, alert)
	E010 Code = "E010" // S3 / cloud storage error (retry)
	E011 Code = "E011" // timeout (retry)
	E012 Code = "E012" // out of memory (split, alert)
	E013 Code = "E013" // cancelled by a person
	E014 Code = "E014" // bad request: missing file, bad option, unknown job type
	E015 Code = "E015" // workflow error (States.*)
	E016 Code = "E016" // internal error (a bug: a recovered panic)
)

// CodeInfo is what JobDesk says about a code: a sentence in each language and whether retrying
// can help by default.
type CodeInfo struct {
	En, Ja    string
	Retryable bool
}

// Codes describes every code.
var Codes = map[Code]CodeInfo{
	E001: {"Could not connect to the service.", "サービスに接続できませんでした。", true},
	E002: {"The service is busy (rate limit); JobDesk will try again shortly.", "サービスが混み合っています（レート制限）。しばらくして再試行します。", true},
	E003: {"The file is too large.", "ファイルが大きすぎます。", false},
	E004: {"The file is damaged or of a type JobDesk cannot read.", "ファイルが壊れているか、読み取れない形式です。", false},
	E005: {"The file is password-protected.", "ファイルにパスワードが設定されています。", false},
	E006: {"The contents could not be read or did not pass validation.", "内容を読み取れないか、検証に失敗しました。", false},
	E007: {"The AI model returned an error.", "AIモデルがエラーを返しました。", true},
	E008: {"The AI reply was not in the expected format.", "AIの応答が想定した形式ではありませんでした。", false},
	E009: {"The database could not be written.", "データベースに書き込めませんでした。", true},
	E010: {"Cloud storage could not be reached.", "クラウドストレージに接続できませんでした。", true},
	E011: {"The job took too long and was stopped.", "処理に時間がかかりすぎたため停止しました。", true},
	E012: {"Not enough memory for this job.", "メモリが不足しています。", false},
	E013: {"The job was cancelled.", "ジョブはキャンセルされました。", false},
	E014: {"The request is not valid.", "リクエストが正しくありません。", false},
	E015: {"The workflow failed.", "ワークフローが失敗しました。", false},
	E016: {"An internal error occurred.", "内部エラーが発生しました。", false},
}

// Error is a failure with a code, a sentence for people in English and Japanese, whether a retry
// can help, and the underlying cause. Name is the Step Functions error name a workflow's Retry
// and Catch match on (States.Timeout, BusinessError, …); it defaults to States.TaskFailed.
type Error struct {
	Code      Code   `json:"code"`
	Name      string `json:"name,omitempty"`
	Message   string `json:"message"`
	MessageJa string `json:"message_ja,omitempty"`
	Retryable bool   `json:"retryable"`
	Cause     string `json:"cause,omitempty"`
	Err       error  `json:"-"`
}

// Errorf makes an Error with code's default retryability, an English message and the Japanese
// default sentence of the code. Use WithJa to give a Japanese sentence of its own.
func Errorf(code Code, format string, args ...any) *Error {
	info := Codes[code]
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), MessageJa: info.Ja, Retryable: info.Retryable}
}

// Wrap makes an Error around err with code's defaults; the cause's text is kept in Cause.
func Wrap(code Code, err error, message string) *Error {
	info := Codes[code]
	e := &Error{Code: code, Message: message, MessageJa: info.Ja, Retryable: info.Retryable, Err: err}
	if err != nil {
		e.Cause = err.Error()
	}
	if e.Message == "" {
		e.Message = info.En
	}
	return e
}

// WithJa sets the Japanese sentence and returns e.
func (e *Error) WithJa(ja string) *Error { e.MessageJa = ja; return e }

// WithName sets the Step Functions error name and returns e.
func (e *Error) WithName(name string) *Error { e.Name = name; return e }

// Permanent marks e not retryable and returns it.
func (e *Error) Permanent() *Error { e.Retryable = false; return e }

// Transient marks e retryable and returns it.
func (e *Error) Transient() *Error { e.Retryable = true; return e }

// Error prints "E004: message (cause)".
func (e *Error) Error() string {
	s := string(e.Code) + ": " + e.Message
	if e.Cause != "" && e.Cause != e.Message {
		s += " (" + e.Cause + ")"
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorName returns the Step Functions error name (States.TaskFailed when none was set).
func (e *Error) ErrorName() string {
	if e.Name != "" {
		return e.Name
	}
	return "States.TaskFailed"
}

// AsError turns any error into an *Error: an *Error anywhere in the chain is returned as it is;
// anything else becomes E016 (internal, not retryable) carrying its text.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var p *PartialResult
	if errors.As(err, &p) {
		return nil
	}
	return Wrap(E016, err, err.Error())
}

// PartialResult is the error a handler returns to end its job PARTIAL: the work finished but some
// parts failed within tolerance. Result is stored as the job's result.
type PartialResult struct {
	Result  json.RawMessage
	Summary string
}

// Error says the job finished partly.
func (p *PartialResult) Error() string { return "partial success: " + p.Summary }

// Partial returns the error that ends a job PARTIAL with result.
func PartialSuccess(result json.RawMessage, summary string) error {
	return &PartialResult{Result: result, Summary: summary}
}

// DeferredError is the error a handler returns when it cannot start yet for a reason outside the
// job (an AI provider is offline, say): the job goes back to PENDING with Message shown to people,
// runs again after After, and the attempt is not counted.
type DeferredError struct {
	After   time.Duration
	Message string
}

// Error says why the job waits.
func (d *DeferredError) Error() string { return "deferred: " + d.Message }

// Defer returns the error that puts a job back to PENDING for after, showing message.
func Defer(after time.Duration, message string) error {
	return &DeferredError{After: after, Message: message}
}

// CauseJSON returns e as JSON, the form a workflow's task failure carries in its Cause, so the
// coded error reads the same whichever executor ran the task (the device's flow engine, or Step
// Functions calling the Lambda worker). ErrorFromCause reads it back.
func (e *Error) CauseJSON() string {
	b, err := json.Marshal(e)
	if err != nil {
		return e.Message
	}
	return string(b)
}

// ErrorFromCause reads the coded error a failed task or execution carries: its cause is the JSON
// of an Error (CauseJSON), or Lambda's error envelope {"errorType":…,"errorMessage":…} whose
// message is that JSON. Anything else (a States.* error of the workflow itself, a Fail state's
// own cause) becomes E015 with name and cause as they are; ok reports whether a coded error was
// found.
func ErrorFromCause(name, cause string) (e *Error, ok bool) {
	if coded := decodeCoded(cause); coded != nil {
		if coded.Name == "" && name != "" && name != "States.TaskFailed" {
			coded.Name = name
		}
		return coded, true
	}
	var envelope struct {
		Type    string `json:"errorType"`
		Message string `json:"errorMessage"`
	}
	if json.Unmarshal([]byte(cause), &envelope) == nil && envelope.Message != "" {
		if coded := decodeCoded(envelope.Message); coded != nil {
			return coded, true
		}
		cause = envelope.Message
	}
	msg := "the workflow failed"
	switch {
	case name != "" && cause != "":
		msg += ": " + name + " " + cause
	case name != "":
		msg += ": " + name
	case cause != "":
		msg += ": " + cause
	}
	return &Error{Code: E015, Name: name, Message: msg, MessageJa: Codes[E015].Ja, Cause: cause}, false
}

func decodeCoded(s string) *Error {
	if len(s) < 2 || s[0] != '{' {
		return nil
	}
	var e Error
	if json.Unmarshal([]byte(s), &e) != nil || e.Code == "" || e.Message == "" {
		return nil
	}
	if _, known := Codes[e.Code]; !known {
		return nil
	}
	return &e
}
