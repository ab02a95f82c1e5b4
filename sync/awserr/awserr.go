// Package awserr turns an error of any AWS client (Step Functions, SQS, STS) into a job.Error
// E010 for people: what went wrong, what to fix when waiting cannot help, and whether it can. S3
// has its own wording in sync/s3blob, which names each object, and reads Code and Throttled from
// here. The dispatcher relies on that split: a transient error (offline, throttled, 5xx) leaves
// the job waiting for the network, a permanent one (access denied, expired sign-in, a missing
// state machine or queue) fails it at once.
package awserr

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials/ssocreds"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"jobdesk/engine/job"
)

// Offline is the message of a job that waits for the cloud to answer again.
const (
	Offline   = "Cannot reach the cloud — waiting for the network"
	OfflineJa = "クラウドに接続できません — waiting for the network"
)

// Where says what a call was for, to word its error.
type Where struct {
	Service  string // "Step Functions", "SQS", "STS"
	Resource string // the state machine, queue or execution ARN/URL, when there is one
	Profile  string // the AWS profile in use ("" for the default chain)
	// Permissions names the IAM actions the call needs ("states:StartExecution").
	Permissions string
}

// Code returns the AWS error code and HTTP status of err, when it has them.
func Code(err error) (code string, status int) {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		code = apiErr.ErrorCode()
	}
	var respErr *awshttp.ResponseError
	if errors.As(err, &respErr) {
		status = respErr.HTTPStatusCode()
	}
	return code, status
}

// Is reports whether err is the AWS error named code.
func Is(err error, code string) bool {
	c, _ := Code(err)
	return c == code
}

// ExpiredSignIn reports an expired SSO session or session token.
func ExpiredSignIn(err error) bool {
	code, _ := Code(err)
	switch code {
	case "ExpiredToken", "ExpiredTokenException", "TokenRefreshRequired", "RequestExpired", "UnauthorizedException":
		return true
	}
	var ssoErr *ssocreds.InvalidTokenError
	if errors.As(err, &ssoErr) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "refresh cached SSO token") || strings.Contains(s, "SSO session has expired") ||
		strings.Contains(s, "cached SSO token")
}

// Throttled reports a throttling answer.
func Throttled(code string, status int) bool {
	switch code {
	case "Throttling", "ThrottlingException", "RequestLimitExceeded", "TooManyRequestsException", "RequestThrottled",
		"SlowDown", "ProvisionedThroughputExceededException", "AWS.SimpleQueueService.RequestThrottled":
		return true
	}
	return status == 429
}

// Unreachable reports a request that got no answer: refused, reset, timed out, no route.
func Unreachable(err error) bool {
	var sendErr *smithyhttp.RequestSendError
	var netErr net.Error
	return errors.As(err, &sendErr) || errors.As(err, &netErr) || strings.Contains(err.Error(), "connection reset") ||
		strings.Contains(err.Error(), "EOF")
}

// SignInCommand is the command that renews the sign-in of profile.
func SignInCommand(profile string) string {
	if profile == "" {
		return "aws sso login"
	}
	return "aws sso login --profile " + profile
}

// Classify returns err as a job.Error E010 (nil for nil; a job.Error passes through). Transient:
// the context ended, no answer, throttling, a 5xx. Permanent: everything else, worded with what
// to fix.
func Classify(err error, w Where) error {
	if err == nil {
		return nil
	}
	var je *job.Error
	if errors.As(err, &je) {
		return err
	}
	code, status := Code(err)
	res := w.Resource
	if res == "" {
		res = w.Service
	}
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return job.Wrap(job.E010, err, fmt.Sprintf("The call to %s was interrupted.", w.Service)).
			WithJa(fmt.Sprintf("%s の呼び出しが中断されました。", w.Service)).Transient()
	case ExpiredSignIn(err):
		return job.Wrap(job.E010, err, fmt.Sprintf("The AWS sign-in has expired: run `%s` and JobDesk goes on.", SignInCommand(w.Profile))).
			WithJa(fmt.Sprintf("AWS のサインインの有効期限が切れています。`%s` を実行してください。", SignInCommand(w.Profile))).Permanent()
	case strings.Contains(err.Error(), "get identity:") || strings.Contains(err.Error(), "failed to retrieve credentials"):
		return job.Wrap(job.E010, err, "No usable AWS credentials were found: configure a profile (aws configure sso) or set the AWS environment variables.").
			WithJa("使用できる AWS の認証情報がありません。プロファイルを設定する（aws configure sso）か、AWS の環境変数を設定してください。").Permanent()
	case Throttled(code, status):
		return job.Wrap(job.E010, err, fmt.Sprintf("%s is busy (throttling); JobDesk will try again shortly.", w.Service)).
			WithJa(fmt.Sprintf("%s が混み合っています。しばらくして再試行します。", w.Service)).Transient()
	case status >= 500 || code == "ServiceUnavailable" || code == "InternalServerError" || code == "InternalFailure":
		return job.Wrap(job.E010, err, fmt.Sprintf("%s answered with a server error (%d); JobDesk will try again.", w.Service, status)).
			WithJa(fmt.Sprintf("%s がサーバーエラー（%d）を返しました。再試行します。", w.Service, status)).Transient()
	case code == "StateMachineDoesNotExist" || code == "AWS.SimpleQueueService.NonExistentQueue" || code == "QueueDoesNotExist" ||
		code == "ResourceNotFoundException":
		return job.Wrap(job.E010, err, fmt.Sprintf("%s does not exist: check cloud.json (state_machines, queues) and the region.", res)).
			WithJa(fmt.Sprintf("%s がありません。cloud.json（state_machines・queues）とリージョンを確認してください。", res)).Permanent()
	case code == "UnrecognizedClientException" || code == "InvalidClientTokenId" || code == "SignatureDoesNotMatch" ||
		code == "IncompleteSignature" || code == "InvalidSignatureException":
		return job.Wrap(job.E010, err, fmt.Sprintf("%s refused the AWS credentials in use: check the profile's keys, or choose another profile.", w.Service)).
			WithJa(fmt.Sprintf("%s が AWS の認証情報を拒否しました。プロファイルのキーを確認するか、別のプロファイルを選んでください。", w.Service)).Permanent()
	case code == "AccessDenied" || code == "AccessDeniedException" || status == 403:
		perm := w.Permissions
		if perm == "" {
			perm = "the needed permissions"
		}
		return job.Wrap(job.E010, err, fmt.Sprintf("Access to %s was denied: allow the AWS identity in use %s, or choose another profile.", res, perm)).
			WithJa(fmt.Sprintf("%s へのアクセスが拒否されました。使用中の AWS の ID に %s を許可するか、別のプロファイルを選んでください。", res, perm)).Permanent()
	case status >= 400 || code != "":
		return job.Wrap(job.E010, err, fmt.Sprintf("%s refused the request for %s (%s).", w.Service, res, cmp.Or(code, fmt.Sprint(status)))).
			WithJa(fmt.Sprintf("%s が %s への要求を拒否しました（%s）。", w.Service, res, cmp.Or(code, fmt.Sprint(status)))).Permanent()
	case Unreachable(err):
		return job.Wrap(job.E010, err, fmt.Sprintf("%s could not be reached: check the network; JobDesk will try again when it is back.", w.Service)).
			WithJa(fmt.Sprintf("%s に接続できません。ネットワークを確認してください。接続が戻ると再試行します。", w.Service)).Transient()
	}
	return job.Wrap(job.E010, err, fmt.Sprintf("%s could not be used.", w.Service)).
		WithJa(fmt.Sprintf("%s を使用できませんでした。", w.Service)).Transient()
}
