package sfnapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"jobdesk/engine/flow"
	"jobdesk/engine/job"
)

// Error is a typed Step Functions error as it goes on the wire: HTTP Status and the body
// {"__type": Type, "message": Message}. Type is one of the API reference's names
// (ExecutionDoesNotExist, InvalidArn, ValidationException, …).
type Error struct {
	Status  int
	Type    string
	Message string
}

// Error prints "Type: Message".
func (e *Error) Error() string { return e.Type + ": " + e.Message }

func typed(typ, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Type: typ, Message: fmt.Sprintf(format, args...)}
}

func validation(format string, args ...any) *Error {
	return typed("ValidationException", format, args...)
}

// engineTypes renames the engine's error types that the API reference spells otherwise.
var engineTypes = map[string]string{
	"MapRunDoesNotExist": "ResourceNotFound",
}

// toError maps any error from decoding or from the engine to its wire form. The engine's
// *flow.APIError maps one to one; a cancelled request maps to a 400 the client will not read
// anyway; anything else is a bug or a broken database: 500 InternalServerError.
func (s *Server) toError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var ae *flow.APIError
	if errors.As(err, &ae) {
		t := ae.Type
		if r, ok := engineTypes[t]; ok {
			t = r
		}
		if t == "" {
			t = "ValidationException"
		}
		return &Error{Status: http.StatusBadRequest, Type: t, Message: ae.Message}
	}
	if errors.Is(err, context.Canceled) {
		return &Error{Status: http.StatusBadRequest, Type: "RequestCanceled", Message: "the request was cancelled"}
	}
	var je *job.Error
	if errors.As(err, &je) {
		if je.Code == job.E014 { // a bad request the engine caught
			return &Error{Status: http.StatusBadRequest, Type: "ValidationException", Message: je.Message}
		}
		return &Error{Status: http.StatusInternalServerError, Type: "InternalServerError", Message: fmt.Sprintf("%s: %s", je.Code, je.Message)}
	}
	return &Error{Status: http.StatusInternalServerError, Type: "InternalServerError", Message: err.Error()}
}

func writeError(w http.ResponseWriter, e *Error) {
	b, _ := json.Marshal(struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}{e.Type, e.Message})
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("X-Amzn-ErrorType", e.Type)
	w.WriteHeader(e.Status)
	w.Write(b)
}
