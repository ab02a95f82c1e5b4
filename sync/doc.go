// Package cloudsync is JobDesk's cloud side: it will dispatch jobs whose target is "cloud" to AWS
// (S3 for artifacts, SQS and Step Functions for execution), keep them in an outbox while the
// device is offline, and mirror their status and progress back into the local queue. The
// directory is named sync; the package is not, so it does not shadow the standard library's.
package cloudsync
