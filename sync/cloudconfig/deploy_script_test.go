package cloudconfig_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gopkg.in/yaml.v3"

	"jobdesk/assets"
	"jobdesk/sync/internal/awstest"
)

// TestDeployScriptPackagesTheCode runs scripts/deploy-aws.sh up to CloudFormation itself against
// versitygw: the Lambda zip and every workflow file are uploaded to the artifact bucket, and the
// packaged template names them — each function's CodeUri the zip, each state machine's
// DefinitionUri its own workflow file, byte for byte.
func TestDeployScriptPackagesTheCode(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("Debian's awscli is not installed (make test installs it)")
	}
	srv := awstest.StartS3(t)
	dir := t.TempDir()
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, _ := zw.Create("bootstrap")
	w.Write([]byte("\x7fELF the cloud worker"))
	zw.Close()
	zipPath := filepath.Join(dir, "lambda.zip")
	os.WriteFile(zipPath, zb.Bytes(), 0o644)
	packaged := filepath.Join(dir, "packaged.yaml")
	script, _ := filepath.Abs("../../scripts/deploy-aws.sh")
	run := func(args ...string) (string, error) {
		cmd := exec.Command(script, args...)
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "AWS_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, srv.Env()...)
		cmd.Env = append(cmd.Env, "AWS_CONFIG_FILE="+os.DevNull, "AWS_SHARED_CREDENTIALS_FILE="+os.DevNull)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("--stack-name", "jobdesk", "--artifact-bucket", srv.Bucket, "--region", srv.Region,
		"--lambda-zip", zipPath, "--package-only", packaged, "--s3-endpoint-url", srv.Endpoint); err != nil {
		t.Fatalf("deploy-aws.sh: %v\n%s", err, out)
	}
	b, err := os.ReadFile(packaged)
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct {
		Resources map[string]struct {
			Type       string         `yaml:"Type"`
			Properties map[string]any `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	// The packaged template keeps the short intrinsic tags: read them as plain values.
	if err := yaml.Unmarshal(b, &tpl); err != nil {
		t.Fatal(err)
	}
	if len(tpl.Resources) == 0 {
		t.Fatalf("packaged template:\n%.2000s", b)
	}
	get := func(key string) []byte {
		t.Helper()
		out, err := srv.Client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(srv.Bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("artifact %s is not in the bucket: %v", key, err)
		}
		defer out.Body.Close()
		data, _ := io.ReadAll(out.Body)
		return data
	}
	functions, machines := 0, map[string]bool{}
	for id, r := range tpl.Resources {
		switch r.Type {
		case "AWS::Serverless::Function":
			functions++
			uri, _ := r.Properties["CodeUri"].(string)
			key, ok := strings.CutPrefix(uri, "s3://"+srv.Bucket+"/")
			if !ok {
				t.Fatalf("%s: CodeUri %v", id, r.Properties["CodeUri"])
			}
			if !bytes.Equal(get(key), zb.Bytes()) {
				t.Errorf("%s: its code is not the Lambda zip", id)
			}
		case "AWS::Serverless::StateMachine":
			loc, _ := r.Properties["DefinitionUri"].(map[string]any)
			if loc["Bucket"] != srv.Bucket {
				t.Fatalf("%s: DefinitionUri %v", id, r.Properties["DefinitionUri"])
			}
			got := get(loc["Key"].(string))
			for _, name := range assets.Workflows() {
				if def, _ := assets.Workflow(name); bytes.Equal(def, got) && strings.EqualFold(strings.ReplaceAll(name, "-", "")+"statemachine", strings.ToLower(id)) {
					machines[name] = true
				}
			}
		}
	}
	if functions != 12 || len(machines) != len(assets.Workflows()) {
		t.Fatalf("%d functions packaged, state machines with their own workflow file: %v", functions, machines)
	}

	// Bad arguments stop before anything is uploaded.
	if out, err := run("--artifact-bucket", srv.Bucket); err == nil || !strings.Contains(out, "--stack-name is required") {
		t.Fatalf("without --stack-name: %v\n%s", err, out)
	}
	if out, err := run("--stack-name", "jobdesk", "--artifact-bucket", srv.Bucket, "--lambda-zip", packaged, "--package-only", packaged); err == nil || !strings.Contains(out, "no bootstrap") {
		t.Fatalf("a zip without bootstrap: %v\n%s", err, out)
	}
}
