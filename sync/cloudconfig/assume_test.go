package cloudconfig_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"jobdesk/sync/cloudconfig"
	"jobdesk/sync/internal/awstest"
)

const desktopRole = "arn:aws:iam::000000000000:role/jobdesk-DesktopRole-1A2B"

// stsEnv points the SDK at the STS stand-in with the person's own long-term key.
func stsEnv(t *testing.T) *awstest.STS {
	s := awstest.StartSTS(t)
	t.Setenv("AWS_ENDPOINT_URL_STS", s.Endpoint)
	t.Setenv("AWS_REGION", "ap-northeast-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIASTAFF")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "staff-secret")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return s
}

// TestDesktopAssumesItsRole: with desktop_role_arn in cloud.json, the desktop's calls are made
// with the role's temporary credentials, obtained with the person's own (STS AssumeRole through
// the real SDK), and obtained again before they expire.
func TestDesktopAssumesItsRole(t *testing.T) {
	s := stsEnv(t)
	ctx := context.Background()
	cfg, err := cloudconfig.Config{DesktopRoleArn: desktopRole}.AWS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		creds, err := cfg.Credentials.Retrieve(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if creds.AccessKeyID != "ASIATEST000000000001" || creds.SessionToken == "" {
			t.Fatalf("credentials %s: not the role's", creds.AccessKeyID)
		}
	}
	a := s.Assumed()
	if len(a) != 1 || a[0].CallerKey != "AKIASTAFF" || a[0].RoleARN != desktopRole || a[0].SessionName == "" {
		t.Fatalf("AssumeRole calls %+v: want one, signed with the person's key, for the desktop role", a)
	}

	// Credentials that expire within the refresh window are obtained again at the next call.
	s.Lifetime = 2 * time.Minute
	cfg, _ = cloudconfig.Config{DesktopRoleArn: desktopRole}.AWS(ctx)
	cfg.Credentials.Retrieve(ctx)
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil || len(s.Assumed()) != 3 || creds.AccessKeyID != "ASIATEST000000000003" {
		t.Fatalf("near expiry: %v %v, %d AssumeRole calls (want a fresh one per call)", creds.AccessKeyID, err, len(s.Assumed()))
	}

	// Without a role in cloud.json the person's own credentials are used.
	cfg, _ = cloudconfig.Config{}.AWS(ctx)
	if creds, _ := cfg.Credentials.Retrieve(ctx); creds.AccessKeyID != "AKIASTAFF" {
		t.Fatalf("without desktop_role_arn: %s", creds.AccessKeyID)
	}
}

// TestProfileThatAssumesTheRoleIsNotChained: a profile whose role_arn is the desktop role
// (source_profile for the person's key) already yields the role; JobDesk does not assume it a
// second time from the role itself (which the role's policy would refuse).
func TestProfileThatAssumesTheRoleIsNotChained(t *testing.T) {
	s := stsEnv(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "config")
	os.WriteFile(conf, []byte("[profile staff]\nregion = ap-northeast-1\n\n[profile jobdesk]\nrole_arn = "+desktopRole+"\nsource_profile = staff\n"), 0o600)
	credsFile := filepath.Join(dir, "credentials")
	os.WriteFile(credsFile, []byte("[staff]\naws_access_key_id = AKIAPROFILE\naws_secret_access_key = profile-secret\n"), 0o600)
	t.Setenv("AWS_CONFIG_FILE", conf)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", credsFile)
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	ctx := context.Background()
	cfg, err := cloudconfig.Config{Profile: "jobdesk", DesktopRoleArn: desktopRole}.AWS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := s.Assumed()
	if len(a) != 1 || a[0].CallerKey != "AKIAPROFILE" || creds.AccessKeyID != a[0].AccessKey {
		t.Fatalf("AssumeRole calls %+v, credentials %s: want the profile's one assumption only", a, creds.AccessKeyID)
	}
}
