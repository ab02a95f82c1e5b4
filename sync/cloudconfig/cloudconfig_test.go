package cloudconfig

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"jobdesk/engine/job"
)

func TestLoadFileThenEnvironmentThenFlags(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, FileName), []byte(`{"region":"ap-northeast-1","bucket":"from-file","prefix":"jd",
		"state_machines":{"csv-processing":"arn:file"},"queues":{"doc":"https://q/doc"},"user_id":"u1","auto":{"documents":10}}`), 0o644)
	env := map[string]string{EnvBucket: "from-env", EnvStateMachines: "csv-processing=arn:env,doc-conversion=arn:doc", "AWS_REGION": "us-west-2"}
	c, err := Load(dir, func(k string) string { return env[k] }, map[string]string{"bucket": "from-flag", "queues": `{"ai":"https://q/ai"}`})
	if err != nil {
		t.Fatal(err)
	}
	if c.Bucket != "from-flag" || c.Region != "us-west-2" || c.Prefix != "jd/" || c.UserID != "u1" {
		t.Fatalf("config = %+v", c)
	}
	if c.StateMachines["csv-processing"] != "arn:env" || c.StateMachines["doc-conversion"] != "arn:doc" ||
		c.Queues["doc"] != "https://q/doc" || c.Queues["ai"] != "https://q/ai" {
		t.Fatalf("maps = %v %v", c.StateMachines, c.Queues)
	}
	if !c.Configured() || c.Location() != "s3://from-flag/jd/" {
		t.Fatalf("configured %v at %s", c.Configured(), c.Location())
	}
	th := c.Thresholds()
	if th.Documents != 10 || th.CSVBytes != DefaultCSVBytes || !th.Big(0, 0, 11) || th.Big(100, 100, 10) {
		t.Fatalf("thresholds %+v", th)
	}
}

func TestLoadWithoutFileAndBadFile(t *testing.T) {
	dir := t.TempDir()
	c, err := Load(dir, func(string) string { return "" }, nil)
	if err != nil || c.Configured() || c.Missing() != "bucket, state_machines or queues" {
		t.Fatalf("empty config = %+v, %v", c, err)
	}
	os.WriteFile(filepath.Join(dir, FileName), []byte(`{"bucket":`), 0o644)
	if _, err := Load(dir, func(string) string { return "" }, nil); job.AsError(err) == nil || job.AsError(err).Code != job.E014 {
		t.Fatalf("bad file: %v", err)
	}
}

func TestSaveRoundTripsWithoutSecrets(t *testing.T) {
	dir := t.TempDir()
	in := Config{Region: "ap-northeast-1", Bucket: "b", StateMachines: map[string]string{"csv-processing": "arn:x"}}
	if err := Save(dir, in); err != nil {
		t.Fatal(err)
	}
	out, err := Load(dir, func(string) string { return "" }, nil)
	if err != nil || out.Bucket != "b" || out.StateMachines["csv-processing"] != "arn:x" {
		t.Fatalf("round trip %+v, %v", out, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, FileName))
	if strings.Contains(strings.ToLower(string(b)), "secret") || strings.Contains(strings.ToLower(string(b)), "key") {
		t.Fatalf("cloud.json holds a key: %s", b)
	}
}

// An SSO profile without a valid session says which command signs in again.
func TestExpiredSSOSessionSaysHowToSignIn(t *testing.T) {
	home := t.TempDir()
	cfgFile := filepath.Join(home, "config")
	os.WriteFile(cfgFile, []byte(`[profile work]
sso_start_url = https://example.awsapps.com/start
sso_region = us-east-1
sso_account_id = 123456789012
sso_role_name = JobDesk
region = ap-northeast-1
`), 0o644)
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION"} {
		t.Setenv(k, "")
	}
	t.Setenv("HOME", home)
	t.Setenv("AWS_CONFIG_FILE", cfgFile)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(home, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	c := Config{Profile: "work"}
	cfg, err := c.AWS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Region != "ap-northeast-1" {
		t.Fatalf("region %q from the profile", cfg.Region)
	}
	err = c.Credentials(context.Background(), cfg)
	e := job.AsError(err)
	if e == nil || e.Code != job.E010 || e.Retryable || !strings.Contains(e.Message, "aws sso login --profile work") ||
		!strings.Contains(e.MessageJa, "aws sso login --profile work") {
		t.Fatalf("expired SSO = %#v", err)
	}
}
