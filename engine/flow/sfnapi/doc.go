// Package sfnapi serves JobDesk's workflow engine (engine/flow) over the AWS Step Functions wire
// protocol, so the real AWS SDKs, the AWS CLI and existing Step Functions tools can drive the
// state machines that run on this device.
//
// The protocol is AWS JSON 1.0: every request is a POST whose X-Amz-Target header names the
// operation ("AWSStepFunctions.StartExecution"), with a camelCase JSON body of content type
// application/x-amz-json-1.0. Dates travel as epoch seconds (with a fraction). A failure is an
// HTTP 400 whose body is {"__type": "ExecutionDoesNotExist", "message": "…"} with Step Functions'
// own error names, or a 500 InternalServerError for a bug (a recovered panic never escapes).
// Every request must be signed with AWS Signature Version 4 by one of the key pairs in
// Options.Credentials (sigv4.go verifies it as AWS does: scope, clock skew of 15 minutes,
// payload hash, signature), and is refused with AWS's own UnrecognizedClientException or
// InvalidSignatureException otherwise. The server listens on loopback unless told otherwise
// (Listen), and it refuses Host headers that are neither loopback names, nor names it was given
// (Options.AllowedHosts), nor — when serving other machines — IP addresses, so a web page cannot
// reach it through DNS rebinding.
//
// The package owns the protocol only: the shapes of requests and answers, routing, the mapping
// of engine errors to typed errors, pagination tokens for the lists the engine answers whole,
// the long poll of GetActivityTask and the wait of StartSyncExecution. Everything about running
// workflows belongs to engine/flow, reached through the Backend interface that *flow.Engine
// satisfies.
//
// Where JobDesk differs from AWS: every state machine is STANDARD (CreateStateMachine with type
// EXPRESS answers StateMachineTypeNotSupported), and StartSyncExecution runs a STANDARD machine
// and waits for it (on AWS it is for EXPRESS machines only). The SDK sends StartSyncExecution to
// the host "sync-" + endpoint host; with a loopback endpoint, turn that prefix off in the client
// (smithy-go's transport/http.DisableEndpointHostPrefix) — the server itself answers any
// operation on any accepted host. With aws-sdk-go-v2:
//
//	c := sfn.New(sfn.Options{
//		Region:       "local",
//		BaseEndpoint: aws.String("http://127.0.0.1:8083"),
//		Credentials:  credentials.NewStaticCredentialsProvider(keyID, secret, ""), // a pair in Options.Credentials
//	}, func(o *sfn.Options) {
//		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
//			return s.Initialize.Add(middleware.InitializeMiddlewareFunc("NoHostPrefix",
//				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (
//					middleware.InitializeOutput, middleware.Metadata, error) {
//					return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
//				}), middleware.Before)
//		})
//	})
//
// Long polls: GetActivityTask waits up to 60 s for a task, so give the client's HTTP timeout
// at least 65 s, as AWS advises.
package sfnapi
