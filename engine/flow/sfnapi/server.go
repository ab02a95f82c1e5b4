package sfnapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"jobdesk/engine/flow"
	"jobdesk/engine/job"
)

// Backend is what the server needs from the workflow engine: exactly the methods of
// *flow.Engine that it calls, so tests and tools can stand in for the engine.
type Backend interface {
	CreateStateMachine(ctx context.Context, name, definition, roleARN string) (flow.StateMachine, error)
	UpdateStateMachine(ctx context.Context, arn, definition string) (flow.StateMachine, error)
	DescribeStateMachine(ctx context.Context, arn string) (flow.StateMachine, error)
	ListStateMachines(ctx context.Context) ([]flow.StateMachine, error)
	DeleteStateMachine(ctx context.Context, arn string) error

	StartExecution(ctx context.Context, smARN string, input json.RawMessage, o flow.StartOptions) (flow.Execution, error)
	StartSyncExecution(ctx context.Context, smARN string, input json.RawMessage, o flow.StartOptions) (flow.Execution, error)
	DescribeExecution(ctx context.Context, arn string) (flow.Execution, error)
	ListExecutions(ctx context.Context, smARN, status string, max int, nextToken string) ([]flow.Execution, string, error)
	ListMapRunExecutions(ctx context.Context, mapRunARN, status string, max int, nextToken string) ([]flow.Execution, string, error)
	StopExecution(ctx context.Context, arn, errName, cause string) (time.Time, error)
	RedriveExecution(ctx context.Context, arn string) (time.Time, error)
	History(ctx context.Context, execARN string, reverse bool, max int, nextToken string) ([]flow.HistoryEvent, string, error)

	DescribeMapRun(ctx context.Context, arn string) (flow.MapRun, error)
	ListMapRuns(ctx context.Context, execARN string) ([]flow.MapRun, error)

	CreateActivity(ctx context.Context, name string) (flow.Activity, error)
	DeleteActivity(ctx context.Context, arn string) error
	GetActivityTask(ctx context.Context, activityARN, workerName string) (token string, input json.RawMessage, err error)
	SendTaskSuccess(ctx context.Context, token string, output json.RawMessage) error
	SendTaskFailure(ctx context.Context, token, errName, cause string) error
	SendTaskHeartbeat(ctx context.Context, token string) error
}

// Options configure a Server. The zero value serves loopback clients with AWS's limits.
type Options struct {
	// Validate checks a definition for ValidateStateMachineDefinition. Nil: flow.Validate
	// without a resource resolver. When set, CreateStateMachine and UpdateStateMachine refuse a
	// definition it reports an ERROR for, so what Validate accepts is what can be stored (jobdesk
	// serve passes a check that also refuses Lambda functions this device does not have).
	Validate func(definition []byte) []flow.Diagnostic
	// Credentials are the key pairs a request may be signed with. Every request must carry a
	// valid AWS Signature Version 4 made with one of them; with none, every request is refused.
	Credentials []Credentials
	// Region is the region a signature's credential scope must name (and ARNs carry): "" is
	// "local", the engine's default.
	Region string
	// AnyRegion accepts a signature scoped to any region. The ARNs of a request signed for
	// another region than Region carry that region: the server reads them as Region's and
	// answers with that region in every ARN, so a client keeps the region of its profile.
	AnyRegion bool
	// SigningRegion, when set, is the one region a signature may be scoped to; ARNs are
	// answered in it as with AnyRegion.
	SigningRegion string
	// AllowRemote also accepts requests whose Host header is an IP address (a client on another
	// machine that reaches the server by address). Host names other than loopback names are
	// accepted only when listed in AllowedHosts, so a web page cannot reach the server through
	// DNS rebinding whatever the address it listens on.
	AllowRemote bool
	// AllowedHosts are further host names (without port) a Host header may give.
	AllowedHosts []string
	// Now is the clock signatures are checked against (nil: time.Now).
	Now func() time.Time
	// PollTimeout bounds one GetActivityTask long poll (0: 60 s, as on AWS).
	PollTimeout time.Duration
	// SyncTimeout bounds StartSyncExecution (0: 5 minutes, as on AWS). An execution still
	// running then is stopped and answered TIMED_OUT with error States.Timeout.
	SyncTimeout time.Duration
	// Logf receives internal errors (500s) and recovered panics. Nil: the standard logger.
	Logf func(format string, args ...any)
}

// Limits of the protocol, as the Step Functions API reference states them.
const (
	maxBodyBytes       = 2 << 20   // a request (definitions are at most 1 MiB of JSON, escaped)
	maxPayloadBytes    = 256 << 10 // execution input and task output
	defaultMaxResults  = 100
	maxMaxResults      = 1000
	defaultPollTimeout = 60 * time.Second
	defaultSyncTimeout = 5 * time.Minute
	targetPrefix       = "AWSStepFunctions."
	contentType        = "application/x-amz-json-1.0"
)

// Server is an http.Handler that answers the Step Functions API from a Backend.
type Server struct {
	b   Backend
	o   Options
	ops map[string]handler
}

// New returns a server over b.
func New(b Backend, o Options) *Server {
	if o.PollTimeout <= 0 {
		o.PollTimeout = defaultPollTimeout
	}
	if o.SyncTimeout <= 0 {
		o.SyncTimeout = defaultSyncTimeout
	}
	if o.Logf == nil {
		o.Logf = log.Printf
	}
	return &Server{b: b, o: o, ops: operations}
}

// Operations returns the names of the operations the server answers, for messages and tests.
func Operations() []string {
	out := make([]string, 0, len(operations))
	for name := range operations {
		out = append(out, name)
	}
	return out
}

// ServeHTTP answers one request. It never lets a panic escape: a bug is answered 500
// InternalServerError and logged.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reqID := requestID()
	w.Header().Set("X-Amzn-RequestId", reqID)
	defer func() {
		if v := recover(); v != nil {
			s.o.Logf("sfnapi: request %s: panic: %v\n%s", reqID, v, debug.Stack())
			writeError(w, &Error{Status: http.StatusInternalServerError, Type: "InternalServerError",
				Message: "an internal error occurred; the request id is " + reqID})
		}
	}()
	if !s.acceptsHost(r.Host) {
		msg := fmt.Sprintf("host %q is not a loopback name; this endpoint serves this device only", r.Host)
		if s.o.AllowRemote || len(s.o.AllowedHosts) > 0 {
			msg = fmt.Sprintf("host %q is not a name this endpoint was told to accept (loopback names, IP addresses, and the names given with --allow-host)", r.Host)
		}
		writeError(w, &Error{Status: http.StatusForbidden, Type: "AccessDeniedException", Message: msg})
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, &Error{Status: http.StatusMethodNotAllowed, Type: "UnknownOperationException",
			Message: "the Step Functions API is served by POST with an X-Amz-Target header"})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, validation("the request is larger than %d bytes", maxBodyBytes))
			return
		}
		writeError(w, &Error{Status: http.StatusBadRequest, Type: "SerializationException", Message: "the request body could not be read: " + err.Error()})
		return
	}
	// The signature covers the body, so it is checked once the body is read, before anything
	// else about the request is looked at.
	if e := s.verify(r, body); e != nil {
		writeError(w, e)
		return
	}
	region := signedRegion(r)
	// A request signed for another region (AnyRegion): its ARNs name the engine's region
	// inside, and the answer names the client's.
	toClient := func(b []byte) []byte { return b }
	if own := s.region(); region != own {
		theirs, ours := []byte("arn:aws:states:"+region+":"), []byte("arn:aws:states:"+own+":")
		body = bytes.ReplaceAll(body, theirs, ours)
		toClient = func(b []byte) []byte { return bytes.ReplaceAll(b, ours, theirs) }
		w = &regionWriter{ResponseWriter: w, rewrite: toClient}
	}
	target := r.Header.Get("X-Amz-Target")
	name, ok := strings.CutPrefix(target, targetPrefix)
	op := s.ops[name]
	if !ok || op == nil {
		writeError(w, &Error{Status: http.StatusBadRequest, Type: "UnknownOperationException",
			Message: fmt.Sprintf("unknown operation %q", target)})
		return
	}
	out, err := op(s, r.Context(), body)
	if err != nil {
		e := s.toError(err)
		if e.Status >= 500 {
			s.o.Logf("sfnapi: request %s %s: %v", reqID, name, err)
		}
		writeError(w, e)
		return
	}
	b, err := json.Marshal(out)
	if err != nil {
		s.o.Logf("sfnapi: request %s %s: encoding the answer: %v", reqID, name, err)
		writeError(w, &Error{Status: http.StatusInternalServerError, Type: "InternalServerError", Message: "the answer could not be encoded"})
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// regionWriter rewrites the ARNs of an answer (errors included) into the client's region.
type regionWriter struct {
	http.ResponseWriter
	rewrite func([]byte) []byte
}

func (w *regionWriter) Write(b []byte) (int, error) {
	if _, err := w.ResponseWriter.Write(w.rewrite(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Serve answers requests on ln until ctx ends, then shuts down gracefully (requests in flight,
// such as long polls, get a few seconds to finish). It returns nil after a shutdown by ctx.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		// Long enough for the longest answer: a long poll or a synchronous execution.
		WriteTimeout: max(s.o.PollTimeout, s.o.SyncTimeout) + 30*time.Second,
		IdleTimeout:  2 * time.Minute,
		BaseContext:  func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Listen opens a TCP listener on addr ("127.0.0.1:8083", "[::1]:0", "localhost:8083"). A host
// that is not loopback (including an empty host, which means every interface) is refused with a
// *job.Error (E014) unless allowRemote is true: anyone holding the key pair could then call it
// from another machine, which must be asked for.
func Listen(addr string, allowRemote bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, job.Wrap(job.E014, err, fmt.Sprintf("%q is not HOST:PORT", addr)).
			WithJa(fmt.Sprintf("%q は「ホスト:ポート」の形式ではありません。例: 127.0.0.1:8083", addr))
	}
	if !allowRemote && !loopbackName(host) {
		return nil, job.Errorf(job.E014, "%s is not a loopback address; pass --allow-remote to let other machines call the API (with the key pair)", addr).
			WithJa(fmt.Sprintf("%s はこのパソコン専用のアドレス（127.0.0.1 など）ではありません。他のパソコンから（キーペアを使って）呼び出せるようにするときだけ --allow-remote を指定してください。", addr))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, job.Wrap(job.E014, err, fmt.Sprintf("cannot listen on %s", addr)).
			WithJa(fmt.Sprintf("%s で待ち受けできません。ポートが使用中の可能性があります。", addr))
	}
	return ln, nil
}

// loopbackName reports whether host (without port) names this machine only: localhost, a name
// under .localhost, or a loopback IP.
func loopbackName(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if i := strings.IndexByte(host, '%'); i >= 0 { // a zone: fe80::1%lo
		host = host[:i]
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// acceptsHost checks a Host header, allowing the "sync-" prefix the SDK puts before
// StartSyncExecution's host: a loopback name, a name in AllowedHosts, or with AllowRemote an
// IP address.
func (s *Server) acceptsHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(strings.ToLower(host), "sync-"), ".")
	if loopbackName(host) {
		return true
	}
	for _, h := range s.o.AllowedHosts {
		if strings.EqualFold(strings.TrimSuffix(h, "."), host) {
			return true
		}
	}
	return s.o.AllowRemote && net.ParseIP(strings.Trim(host, "[]")) != nil
}

// requestID returns a random UUID: the X-Amzn-RequestId of an answer, and the name of a
// synchronous execution started without one.
func requestID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // a version 4 (random) UUID
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
