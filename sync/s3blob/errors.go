package s3blob

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/aws/aws-sdk-go-v2/credentials/ssocreds"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
	"jobdesk/sync/awserr"
)

// fail turns an error of the S3 client into a job.Error E010 for people: what went wrong with
// which object, what to fix when a retry cannot help, and whether a retry can. The chain keeps a
// blob.PathError and the SDK's error, and blob.ErrNotExist for a missing object.
func fail(op, uri string, err error) error {
	code, status := awserr.Code(err)
	bucket, _, _ := Split(uri)
	pathErr := &blob.PathError{Op: op, URI: uri, Err: err}
	var e *job.Error
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		e = job.Wrap(job.E010, pathErr, fmt.Sprintf("The transfer of %s was interrupted.", uri)).
			WithJa(fmt.Sprintf("%s の転送が中断されました。", uri)).Transient()
	case code == "NoSuchKey" || (status == 404 && (code == "NotFound" || code == "")):
		pathErr.Err = errors.Join(blob.ErrNotExist, err)
		e = job.Wrap(job.E010, pathErr, fmt.Sprintf("%s does not exist.", uri)).
			WithJa(fmt.Sprintf("%s は存在しません。", uri)).Permanent()
	case code == "NoSuchBucket":
		e = job.Wrap(job.E010, pathErr, fmt.Sprintf("The S3 bucket %q does not exist: check the bucket name (\"bucket\" in cloud.json) and the region.", bucket)).
			WithJa(fmt.Sprintf("S3 バケット「%s」がありません。cloud.json の bucket とリージョンを確認してください。", bucket)).Permanent()
	case expiredSignIn(code, err):
		e = job.Wrap(job.E010, pathErr, "The AWS sign-in has expired: sign in again (aws sso login --profile <your profile>) or renew the credentials.").
			WithJa("AWS のサインインの有効期限が切れています。もう一度サインインしてください（aws sso login --profile <プロファイル名>）。").Permanent()
	case strings.Contains(err.Error(), "get identity:"):
		e = job.Wrap(job.E010, pathErr, "No usable AWS credentials were found: configure a profile (aws configure sso) or set the AWS environment variables.").
			WithJa("使用できる AWS の認証情報がありません。プロファイルを設定する（aws configure sso）か、AWS の環境変数を設定してください。").Permanent()
	case code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || code == "InvalidToken":
		e = job.Wrap(job.E010, pathErr, "S3 refused the AWS credentials in use: check the access key and secret of the profile, or choose another profile.").
			WithJa("S3 が AWS の認証情報を拒否しました。プロファイルのアクセスキーとシークレットを確認するか、別のプロファイルを選んでください。").Permanent()
	case code == "AccessDenied" || code == "AllAccessDisabled" || code == "Forbidden" || (status == 403 && code == ""):
		e = job.Wrap(job.E010, pathErr, fmt.Sprintf("Access to %s was denied: allow the AWS identity in use s3:GetObject, s3:PutObject and s3:ListBucket on bucket %q, or choose another profile.", uri, bucket)).
			WithJa(fmt.Sprintf("%s へのアクセスが拒否されました。使用中の AWS の ID にバケット「%s」の s3:GetObject・s3:PutObject・s3:ListBucket を許可するか、別のプロファイルを選んでください。", uri, bucket)).Permanent()
	case awserr.Throttled(code, status) || status == 503:
		e = job.Wrap(job.E010, pathErr, "S3 is busy (throttling); JobDesk will try again shortly.").
			WithJa("S3 が混み合っています。しばらくして再試行します。").Transient()
	case status >= 500:
		e = job.Wrap(job.E010, pathErr, fmt.Sprintf("S3 answered with a server error (%d) for %s; JobDesk will try again.", status, uri)).
			WithJa(fmt.Sprintf("%s で S3 がサーバーエラー（%d）を返しました。再試行します。", uri, status)).Transient()
	case code == "BadDigest" || code == "InvalidDigest" || code == "XAmzContentSHA256Mismatch" || code == "RequestTimeout":
		e = job.Wrap(job.E010, pathErr, fmt.Sprintf("The bytes of %s did not arrive intact; JobDesk will send them again.", uri)).
			WithJa(fmt.Sprintf("%s のデータが正しく届きませんでした。再送します。", uri)).Transient()
	case status >= 400:
		e = job.Wrap(job.E010, pathErr, fmt.Sprintf("S3 refused the request for %s (%s).", uri, cmp.Or(code, fmt.Sprint(status)))).
			WithJa(fmt.Sprintf("S3 が %s への要求を拒否しました（%s）。", uri, cmp.Or(code, fmt.Sprint(status)))).Permanent()
	case unreachable(err):
		e = job.Wrap(job.E010, pathErr, "S3 could not be reached: check the network; JobDesk will try again when it is back.").
			WithJa("S3 に接続できません。ネットワークを確認してください。接続が戻ると再試行します。").Transient()
	default:
		e = job.Wrap(job.E010, pathErr, fmt.Sprintf("Cloud storage could not be used for %s.", uri)).
			WithJa(fmt.Sprintf("%s でクラウドストレージを使用できませんでした。", uri)).Transient()
	}
	return e
}

// invalidURI is the error of a URI that names no S3 object; nothing a retry can fix.
func invalidURI(op, uri string, err error) error {
	var pe *blob.PathError
	if !errors.As(err, &pe) {
		err = &blob.PathError{Op: op, URI: uri, Err: err}
	}
	return job.Wrap(job.E014, err, fmt.Sprintf("%q is not an S3 object URI (s3://bucket/key).", uri)).
		WithJa(fmt.Sprintf("「%s」は S3 のオブジェクト URI（s3://バケット/キー）ではありません。", uri)).Permanent()
}

// expiredSignIn reports an expired session by S3's codes and the SSO provider's error type only;
// awserr.ExpiredSignIn also reads the SDK's wording, which here falls to "no usable credentials".
func expiredSignIn(code string, err error) bool {
	switch code {
	case "ExpiredToken", "ExpiredTokenException", "TokenRefreshRequired", "RequestExpired":
		return true
	}
	var ssoErr *ssocreds.InvalidTokenError
	return errors.As(err, &ssoErr)
}

// unreachable reports a request that got no answer by the error's type only (awserr.Unreachable
// also reads "connection reset" and "EOF" in the message).
func unreachable(err error) bool {
	var sendErr *smithyhttp.RequestSendError
	var netErr net.Error
	return errors.As(err, &sendErr) || errors.As(err, &netErr)
}

// isUnsatisfiableRange reports S3's answer to a range that starts past the end of the object.
func isUnsatisfiableRange(err error) bool {
	code, status := awserr.Code(err)
	return code == "InvalidRange" || status == 416
}
