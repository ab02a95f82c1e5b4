// Package cloudconfig owns where JobDesk's cloud is: cloud.json in the data folder, overridden by
// the environment, then by command-line flags, and the aws.Config built from it the AWS way.
//
// Nothing secret is stored or read here. Credentials come only through the AWS SDK's default
// chain (config.LoadDefaultConfig: environment, shared profiles, SSO, IMDS), and endpoints only
// from the SDK's own settings (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_S3, _SQS, _SFN, or endpoint_url
// in the profile), so a VPC endpoint or a loopback test server needs no JobDesk option. cloud.json
// has no key for a key. With desktop_role_arn, those credentials only obtain the stack's desktop
// role (STS AssumeRole), whose temporary credentials sign every call.
package cloudconfig

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/middleware"

	"jobdesk/engine/job"
	"jobdesk/sync/awserr"
)

// FileName is the configuration file in the data folder.
const FileName = "cloud.json"

// Defaults of the auto target's thresholds (the issue's): a CSV over 200 MB or 2M rows, more
// than 50 documents at once.
const (
	DefaultCSVBytes  = 200 << 20
	DefaultCSVRows   = 2_000_000
	DefaultDocuments = 50
)

// Thresholds decide `--target auto`: above any of them a job goes to the cloud (when it is
// configured and reachable). 0 takes the default.
type Thresholds struct {
	CSVBytes  int64 `json:"csv_bytes,omitempty"`
	CSVRows   int64 `json:"csv_rows,omitempty"`
	Documents int   `json:"documents,omitempty"`
}

// Config is cloud.json. Every key is optional.
type Config struct {
	Region  string `json:"region,omitempty"`
	Profile string `json:"profile,omitempty"`
	// Bucket holds inputs, results and caches; Prefix is the key prefix under it ("jobdesk/").
	Bucket string `json:"bucket,omitempty"`
	Prefix string `json:"prefix,omitempty"`
	// StateMachines maps a workflow (an assets/workflows file name without ".asl.json") to the
	// ARN of its state machine.
	StateMachines map[string]string `json:"state_machines,omitempty"`
	// Queues maps a job type to the URL of the SQS queue its work is sent to.
	Queues map[string]string `json:"queues,omitempty"`
	// DeadLetterQueues maps a job type to the URL of its queue's dead-letter queue (the
	// operations console's; a queue's redrive policy names it too).
	DeadLetterQueues map[string]string `json:"dead_letter_queues,omitempty"`
	// StatusQueue is the URL of the queue the backend sends execution status changes and worker
	// replies to.
	StatusQueue string `json:"status_queue,omitempty"`
	// StatusDeadLetterQueue is the status queue's dead-letter queue.
	StatusDeadLetterQueue string `json:"status_dead_letter_queue,omitempty"`
	// DesktopRoleArn is the role the stack made for the desktop; it is a name, not a
	// credential. When set, the desktop assumes it with the person's own credentials (STS
	// AssumeRole, renewed before expiry), unless the profile in use already names a role_arn.
	DesktopRoleArn string `json:"desktop_role_arn,omitempty"`
	// BedrockModel and BedrockRegion are the foundation model the stack's AI functions call and
	// its region (the stack's outputs); `cloud status` checks the model is enabled there.
	BedrockModel  string `json:"bedrock_model,omitempty"`
	BedrockRegion string `json:"bedrock_region,omitempty"`
	// UserID goes into every message (the seeds' user_id).
	UserID string `json:"user_id,omitempty"`
	// Auto holds the thresholds of the auto target.
	Auto Thresholds `json:"auto,omitzero"`
	// S3PathStyle addresses buckets as host/bucket/key. It is on by itself when an S3 endpoint
	// is set through the SDK's settings (S3-compatible stores and test servers need it).
	S3PathStyle bool `json:"s3_path_style,omitempty"`
}

// Environment variables that override cloud.json (after it, before flags). Region and profile
// also follow the SDK's own AWS_REGION / AWS_DEFAULT_REGION / AWS_PROFILE.
const (
	EnvRegion        = "JOBDESK_CLOUD_REGION"
	EnvProfile       = "JOBDESK_CLOUD_PROFILE"
	EnvBucket        = "JOBDESK_CLOUD_BUCKET"
	EnvPrefix        = "JOBDESK_CLOUD_PREFIX"
	EnvStateMachines = "JOBDESK_CLOUD_STATE_MACHINES" // workflow=arn,workflow=arn (or a JSON object)
	EnvQueues        = "JOBDESK_CLOUD_QUEUES"         // type=url,type=url (or a JSON object)
	EnvStatusQueue   = "JOBDESK_CLOUD_STATUS_QUEUE"
	EnvUserID        = "JOBDESK_CLOUD_USER_ID"
)

// Path is cloud.json's path in data folder dir.
func Path(dir string) string { return filepath.Join(dir, FileName) }

// Load reads dir/cloud.json (a missing file is an empty Config), applies the environment
// (getenv; nil: os.Getenv) and then flags (flag name as in Flags → value; empty values are
// ignored).
func Load(dir string, getenv func(string) string, flags map[string]string) (Config, error) {
	return LoadFile(Path(dir), getenv, flags)
}

// LoadFile is Load of a cloud.json at path (`jobdesk cloud --config FILE`).
func LoadFile(path string, getenv func(string) string, flags map[string]string) (Config, error) {
	var c Config
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return c, job.Wrap(job.E014, err, path+" could not be read").WithJa(path + " を読み取れません。").Permanent()
	default:
		if err := json.Unmarshal(b, &c); err != nil {
			return c, job.Wrap(job.E014, err, path+" is not valid JSON: "+err.Error()).
				WithJa(path + " が正しい JSON ではありません。").Permanent()
		}
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	set := func(dst *string, vals ...string) {
		for _, v := range vals {
			if v = strings.TrimSpace(v); v != "" {
				*dst = v
			}
		}
	}
	set(&c.Region, getenv("AWS_DEFAULT_REGION"), getenv("AWS_REGION"), getenv(EnvRegion), flags["region"])
	set(&c.Profile, getenv("AWS_PROFILE"), getenv(EnvProfile), flags["profile"])
	set(&c.Bucket, getenv(EnvBucket), flags["bucket"])
	set(&c.Prefix, getenv(EnvPrefix), flags["prefix"])
	set(&c.StatusQueue, getenv(EnvStatusQueue), flags["status-queue"])
	set(&c.UserID, getenv(EnvUserID), flags["user-id"])
	for _, m := range []struct {
		dst  *map[string]string
		vals []string
		name string
	}{
		{&c.StateMachines, []string{getenv(EnvStateMachines), flags["state-machines"]}, "state machines"},
		{&c.Queues, []string{getenv(EnvQueues), flags["queues"]}, "queues"},
	} {
		for _, v := range m.vals {
			kv, err := parseMap(v)
			if err != nil {
				return c, job.Errorf(job.E014, "the %s %q are not name=value pairs: %v", m.name, v, err).
					WithJa("name=value の形で指定してください: " + v).Permanent()
			}
			for k, val := range kv {
				if *m.dst == nil {
					*m.dst = map[string]string{}
				}
				(*m.dst)[k] = val
			}
		}
	}
	if c.Prefix != "" && !strings.HasSuffix(c.Prefix, "/") {
		c.Prefix += "/"
	}
	return c, nil
}

// Flags are the flag names Load understands, for commands that offer them.
var Flags = []string{"region", "profile", "bucket", "prefix", "state-machines", "queues", "status-queue", "user-id"}

// parseMap reads "a=b,c=d" or a JSON object.
func parseMap(s string) (map[string]string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	out := map[string]string{}
	if strings.HasPrefix(s, "{") {
		return out, json.Unmarshal([]byte(s), &out)
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("%q has no name=value", part)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

// NotFound is the error of a command that needs cloud.json at path when there is none: it says
// how to write it.
func NotFound(path string) error {
	return job.Errorf(job.E014, "%s does not exist: write it with `jobdesk cloud config --from-stack-outputs FILE`", path).
		WithJa(fmt.Sprintf("%s がありません。`jobdesk cloud config --from-stack-outputs FILE` で作成してください。", path))
}

// Save writes c as dir/cloud.json atomically, readable by its owner only (the settings page,
// `jobdesk cloud config`). It holds no secret.
func Save(dir string, c Config) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".cloud-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), Path(dir))
}

// Configured reports whether jobs can go to the cloud: a bucket and at least one state machine or
// queue.
func (c Config) Configured() bool {
	return c.Bucket != "" && (len(c.StateMachines) > 0 || len(c.Queues) > 0)
}

// Missing says, for people, what cloud.json still needs ("" when Configured).
func (c Config) Missing() string {
	var m []string
	if c.Bucket == "" {
		m = append(m, "bucket")
	}
	if len(c.StateMachines) == 0 && len(c.Queues) == 0 {
		m = append(m, "state_machines or queues")
	}
	return strings.Join(m, ", ")
}

// Workflows returns the workflows with a state machine, sorted.
func (c Config) Workflows() []string {
	out := make([]string, 0, len(c.StateMachines))
	for k := range c.StateMachines {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Thresholds returns the auto target's thresholds with defaults filled in.
func (c Config) Thresholds() Thresholds {
	t := c.Auto
	if t.CSVBytes <= 0 {
		t.CSVBytes = DefaultCSVBytes
	}
	if t.CSVRows <= 0 {
		t.CSVRows = DefaultCSVRows
	}
	if t.Documents <= 0 {
		t.Documents = DefaultDocuments
	}
	return t
}

// Big reports whether an input is over the auto target's thresholds: a CSV of size bytes and
// rows rows (rows < 0: not counted), or docs documents at once.
func (t Thresholds) Big(size, rows int64, docs int) bool {
	return size > t.CSVBytes || rows > t.CSVRows || docs > t.Documents
}

// Location is the bucket and prefix as a URI prefix: "s3://bucket/prefix/".
func (c Config) Location() string {
	return "s3://" + c.Bucket + "/" + c.Prefix
}

// APIOptions are added to every configuration AWS returns, so every client the desktop builds
// from it carries them (the tests record each call the desktop makes with one).
var APIOptions []func(*middleware.Stack) error

// AWS returns the SDK configuration: config.LoadDefaultConfig with the region and profile of c
// when set. It does not call AWS; Check does.
func (c Config) AWS(ctx context.Context) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	if c.Region != "" {
		opts = append(opts, config.WithRegion(c.Region))
	}
	if c.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(c.Profile))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return cfg, job.Wrap(job.E010, err, fmt.Sprintf("The AWS settings could not be loaded (profile %q): %v", c.Profile, err)).
			WithJa("AWS の設定を読み込めませんでした。プロファイル名と ~/.aws/config を確認してください。").Permanent()
	}
	cfg.APIOptions = append(cfg.APIOptions, APIOptions...)
	if c.DesktopRoleArn != "" && cfg.Credentials != nil && !profileAssumes(cfg) {
		cfg.Credentials = assumeRole(cfg, c.DesktopRoleArn)
	}
	return cfg, nil
}

// RefreshWindow is how long before they expire the desktop role's credentials are renewed.
const RefreshWindow = 5 * time.Minute

// assumeRole returns credentials of role obtained with cfg's own (the person's: keys, a
// profile, SSO), through STS AssumeRole for an hour, cached and renewed RefreshWindow before
// they expire, so a long-running window never signs with expired credentials.
func assumeRole(cfg aws.Config, role string) aws.CredentialsProvider {
	session := "jobdesk"
	if u, err := user.Current(); err == nil {
		session += "-" + sessionName.ReplaceAllString(u.Username, "-")
	}
	if len(session) > 64 {
		session = session[:64]
	}
	p := stscreds.NewAssumeRoleProvider(sts.NewFromConfig(cfg), role, func(o *stscreds.AssumeRoleOptions) {
		o.RoleSessionName = session
		o.Duration = time.Hour
	})
	return aws.NewCredentialsCache(p, func(o *aws.CredentialsCacheOptions) { o.ExpiryWindow = RefreshWindow })
}

// sessionName are the characters a role session name may not hold.
var sessionName = regexp.MustCompile(`[^A-Za-z0-9+=,.@_-]`)

// profileAssumes reports whether the profile in use already assumes a role (role_arn), so its
// credentials are the role's: assuming DesktopRoleArn again from them would be role chaining,
// which the desktop role's own policy does not allow.
func profileAssumes(cfg aws.Config) bool {
	for _, src := range cfg.ConfigSources {
		if sc, ok := src.(config.SharedConfig); ok && sc.RoleARN != "" {
			return true
		}
	}
	return false
}

// Credentials retrieves the credentials of cfg once, so an expired SSO session or a missing
// profile is said before any job goes out: E010 naming `aws sso login --profile X`.
func (c Config) Credentials(ctx context.Context, cfg aws.Config) error {
	if cfg.Credentials == nil {
		return job.Errorf(job.E010, "No AWS credentials are configured: configure a profile (aws configure sso) or set the AWS environment variables.").
			WithJa("AWS の認証情報が設定されていません。プロファイルを設定する（aws configure sso）か、AWS の環境変数を設定してください。").Permanent()
	}
	_, err := cfg.Credentials.Retrieve(ctx)
	return awserr.Classify(err, awserr.Where{Service: "AWS sign-in", Profile: c.Profile})
}

// PathStyle reports whether S3 should be addressed path-style: when cloud.json says so or an S3
// endpoint comes from the environment (an S3-compatible server).
func (c Config) PathStyle(cfg aws.Config, getenv func(string) string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	return c.S3PathStyle || cfg.BaseEndpoint != nil || getenv("AWS_ENDPOINT_URL_S3") != "" || getenv("AWS_ENDPOINT_URL") != ""
}

// String is c for logs and `cloud status`: it holds nothing secret.
func (c Config) String() string {
	return "region=" + c.Region + " profile=" + c.Profile + " bucket=" + c.Bucket + " prefix=" + c.Prefix +
		" state_machines=" + strconv.Itoa(len(c.StateMachines)) + " queues=" + strconv.Itoa(len(c.Queues))
}
