package deploy

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"jobdesk/assets"
)

// debianPython is the interpreter of Debian's awscli package (`make test` installs it); a Python
// earlier on PATH may carry a different AWS CLI.
const debianPython = "/usr/bin/python3"

// exporterScript runs the AWS CLI's own `cloudformation package` exporter on the template with
// an uploader that copies each artifact into a folder under its SHA-256 instead of sending it to
// S3, and prints what every resource got: {logical ID: {"type", "sha256", "uri"}}.
const exporterScript = `
import hashlib, json, os, shutil, sys
from awscli.customizations.cloudformation.artifact_exporter import Template

template, out = sys.argv[1], sys.argv[2]
seen = {}

class Uploader:
    def upload_with_dedup(self, path, extension=None):
        h = hashlib.sha256(open(path, "rb").read()).hexdigest()
        shutil.copyfile(path, os.path.join(out, h))
        seen[h] = True
        return "s3://artifacts/" + h
    def to_path_style_s3_url(self, key, version=None):
        return "https://s3.amazonaws.com/artifacts/" + key

t = Template(os.path.basename(template), os.path.dirname(os.path.abspath(template)), Uploader())
exported = t.export()
result = {}
for rid, r in exported["Resources"].items():
    props = r.get("Properties") or {}
    for prop in ("CodeUri", "DefinitionUri"):
        v = props.get(prop)
        if v is None:
            continue
        if isinstance(v, dict):
            key = v.get("Key", "")
        else:
            key = str(v).rsplit("/", 1)[-1]
        result[rid] = {"type": r["Type"], "property": prop, "sha256": key, "uri": v}
json.dump(result, sys.stdout)
`

// packageLayout copies the template, the workflows and a Lambda zip into a folder laid out
// like the repository (assets/deploy, assets/workflows, dist), so the exporter resolves the
// template's relative paths as it would in a checkout after `make lambda`. It returns the
// template's path and the SHA-256 of the zip and of each workflow file.
func packageLayout(t *testing.T, template []byte) (string, string, map[string]string) {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"assets/deploy", "assets/workflows", "dist"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tpl := filepath.Join(root, "assets", "deploy", "template.yaml")
	if err := os.WriteFile(tpl, template, 0o644); err != nil {
		t.Fatal(err)
	}
	// Files beside the template, as in the repository: a function packaged from the template's
	// folder would carry them instead of the bootstrap.
	for _, f := range []string{"README.md", "check_test.go"} {
		if err := os.WriteFile(filepath.Join(root, "assets", "deploy", f), []byte("not code\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "bootstrap", Method: zip.Deflate})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("\x7fELF the cloud worker"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "dist", "lambda-arm64.zip"), zb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	zsum := sha256.Sum256(zb.Bytes())
	wf := map[string]string{}
	for name, def := range shippedWorkflows(t) {
		if err := os.WriteFile(filepath.Join(root, "assets", "workflows", name+".asl.json"), def, 0o644); err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(def)
		wf[name] = hex.EncodeToString(s[:])
	}
	return tpl, hex.EncodeToString(zsum[:]), wf
}

type exported struct {
	Type     string `json:"type"`
	Property string `json:"property"`
	SHA256   string `json:"sha256"`
}

// runExporter runs the AWS CLI's exporter over template and returns what each resource got,
// and the folder holding the uploaded artifacts by SHA-256.
func runExporter(t *testing.T, template []byte) (map[string]exported, string, map[string]string, string) {
	t.Helper()
	if _, err := os.Stat(debianPython); err != nil {
		t.Skipf("%s is missing: make test installs Debian's awscli", debianPython)
	}
	if err := exec.Command(debianPython, "-c", "import awscli.customizations.cloudformation.artifact_exporter").Run(); err != nil {
		t.Skip("Debian's awscli is not installed (make test installs it)")
	}
	tpl, zipSum, wf := packageLayout(t, template)
	out := t.TempDir()
	cmd := exec.Command(debianPython, "-c", exporterScript, tpl, out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("the AWS CLI's exporter failed: %v\n%s", err, stderr.String())
	}
	res := map[string]exported{}
	if err := json.Unmarshal(stdout, &res); err != nil {
		t.Fatalf("exporter output: %v\n%s", err, stdout)
	}
	return res, zipSum, wf, out
}

// TestPackageShipsTheCode: `aws cloudformation package` (Debian awscli's exporter, run on the
// template as it is) gives every function the Lambda zip with its bootstrap, and every state
// machine its own workflow file.
func TestPackageShipsTheCode(t *testing.T) {
	for _, e := range packagingErrors(t, readTemplate(t)) {
		t.Error(e)
	}
}

func packagingErrors(t *testing.T, template []byte) []string {
	res, zipSum, wf, out := runExporter(t, template)
	tm, err := parseTemplate(template)
	if err != nil {
		t.Fatal(err)
	}
	var errs []string
	fns := tm.ofType("AWS::Serverless::Function")
	if len(fns) == 0 {
		t.Fatal("the template deploys no function")
	}
	for _, id := range fns {
		got, ok := res[id]
		if !ok {
			errs = append(errs, id+": the exporter gave it no CodeUri")
			continue
		}
		if got.SHA256 != zipSum {
			zr, err := zip.OpenReader(filepath.Join(out, got.SHA256))
			names := []string{}
			if err == nil {
				for _, f := range zr.File {
					names = append(names, f.Name)
				}
				zr.Close()
			}
			errs = append(errs, id+": packaged as a zip of "+strings.Join(names, ", ")+", not dist/lambda-arm64.zip with its bootstrap")
		}
	}
	for _, name := range assets.Workflows() {
		id := pascal(name) + "StateMachine"
		got, ok := res[id]
		if !ok {
			errs = append(errs, id+": the exporter uploaded no definition")
			continue
		}
		if got.Property != "DefinitionUri" || got.SHA256 != wf[name] {
			errs = append(errs, id+": its DefinitionUri is not assets/workflows/"+name+".asl.json")
		}
	}
	return errs
}

// TestPackageCatchesGlobalsCodeUri: with the zip named only under Globals (which the exporter
// does not read), the check fails: every function would ship the template's folder.
func TestPackageCatchesGlobalsCodeUri(t *testing.T) {
	text := string(readTemplate(t))
	text = strings.ReplaceAll(text, "      CodeUri: "+codeURI+"\n", "")
	text = strings.Replace(text, "Globals:\n  Function:\n", "Globals:\n  Function:\n    CodeUri: "+codeURI+"\n", 1)
	errs := packagingErrors(t, []byte(text))
	if len(errs) == 0 {
		t.Fatal("the packaging check passed a template whose functions name their code only under Globals")
	}
	if !strings.Contains(strings.Join(errs, "\n"), "README.md") {
		t.Errorf("the error should name what was packaged instead:\n%s", strings.Join(errs, "\n"))
	}
}
