package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"jobdesk/engine/blob"
	"jobdesk/engine/blob/blobtest"
)

// TestItemReaderResultWriterThroughBlobs runs a distributed Map whose ItemReader reads from a
// "mem://" bucket and whose ResultWriter writes to a bucket named in Options.Buckets (served as
// s3:// by the same in-memory store), and checks that nothing of it touched the data folder.
func TestItemReaderResultWriterThroughBlobs(t *testing.T) {
	mem := blobtest.NewMem()
	v := newEnvWith(t, func(dir string, o *Options) {
		mux := blob.NewMux(blob.Local{}) // no root: a relative path that slipped through would fail
		mux.Handle("mem", mem)
		mux.Handle("s3", mem)
		o.Blobs, o.Buckets = mux, []string{"jobdesk-results"}
	})
	var csv strings.Builder
	csv.WriteString("user_id,logins\n")
	for i := 0; i < 1200; i++ {
		fmt.Fprintf(&csv, "u%d,%d\n", i, i%5)
	}
	ctx := context.Background()
	if err := blob.WriteAll(ctx, mem, "mem://b/in/users.csv", []byte(csv.String())); err != nil {
		t.Fatal(err)
	}
	arn := v.machine(t, "blob-map", `{"StartAt":"M","States":{"M":{"Type":"Map",
		"ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV","CSVHeaderLocation":"FIRST_ROW"},
			"Parameters":{"Bucket":"mem://b","Key":"in/users.csv"}},
		"ItemBatcher":{"MaxItemsPerBatch":500},
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"C","States":{"C":{"Type":"Task","Resource":"λdouble","End":true}}},
		"ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"jobdesk-results","Prefix":"runs"}},"End":true}}}`)
	x := v.run(t, arn, "blob-1", `{}`)
	if x.Status != StatusSucceeded {
		t.Fatalf("%s %s %s", x.Status, x.Error, x.Cause)
	}
	det, _ := obj(x.Output)["ResultWriterDetails"].(map[string]any)
	key, _ := det["Key"].(string)
	if det["Bucket"] != "jobdesk-results" || !strings.HasPrefix(key, "runs/") || !strings.HasSuffix(key, "/manifest.json") {
		t.Fatalf("output %s", x.Output)
	}
	mb, ok := mem.Get("s3://jobdesk-results/" + key)
	if !ok {
		list, _ := mem.List(ctx, "")
		t.Fatalf("no manifest at s3://jobdesk-results/%s; the store holds %v", key, list)
	}
	var manifest struct {
		DestinationBucket string
		ResultFiles       map[string][]struct {
			Key  string
			Size int64
		}
	}
	if err := json.Unmarshal(mb, &manifest); err != nil || manifest.DestinationBucket != "jobdesk-results" {
		t.Fatalf("manifest %s (%v)", mb, err)
	}
	for _, kind := range []string{"SUCCEEDED", "FAILED"} {
		f := manifest.ResultFiles[kind][0]
		b, ok := mem.Get("s3://jobdesk-results/" + f.Key)
		if !ok || int64(len(b)) != f.Size {
			t.Fatalf("%s file %s: found %v, %d bytes, manifest says %d", kind, f.Key, ok, len(b), f.Size)
		}
	}
	sb, _ := mem.Get("s3://jobdesk-results/" + manifest.ResultFiles["SUCCEEDED"][0].Key)
	var results []struct {
		Index  int
		Output string
	}
	if err := json.Unmarshal(sb, &results); err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 || results[0].Output != `{"count":500}` || results[2].Output != `{"count":200}` {
		t.Fatalf("results %+v", results)
	}
	if open := mem.OpenWriters(); open != 0 {
		t.Errorf("%d result writers were left neither committed nor aborted", open)
	}
	// Only the database lives in the data folder.
	filepath.WalkDir(v.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".csv")) {
			t.Errorf("the Map wrote or read a local file: %s", p)
		}
		return nil
	})
	// A missing object fails the Map as a missing file does.
	arn = v.machine(t, "blob-missing", `{"StartAt":"M","States":{"M":{"Type":"Map",
		"ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"JSON"},"Parameters":{"Bucket":"mem://b","Key":"nope.json"}},
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`)
	x = v.run(t, arn, "blob-2", `{}`)
	if x.Status != StatusFailed || x.Error != "States.ItemReaderFailed" || !strings.Contains(x.Cause, "nope.json") {
		t.Fatalf("missing object: %s %s %s", x.Status, x.Error, x.Cause)
	}
}

func TestObjectURI(t *testing.T) {
	data := filepath.Join(string(filepath.Separator), "data")
	abs := filepath.Join(string(filepath.Separator), "srv", "in")
	e := &Engine{opts: Options{DataDir: data, Buckets: []string{"jobdesk-results"}}}
	for _, c := range []struct{ bucket, key, want string }{
		{"", "items.json", filepath.Join(data, "items.json")},
		{"", filepath.Join(abs, "a.csv"), filepath.Join(abs, "a.csv")},
		{"", "s3://b/k.csv", "s3://b/k.csv"},
		{"in", "users.csv", filepath.Join(data, "in", "users.csv")},
		{abs, "users.csv", filepath.Join(abs, "users.csv")},
		{"in", filepath.Join(abs, "a.csv"), filepath.Join(abs, "a.csv")},
		{"s3://bucket", "runs/x/manifest.json", "s3://bucket/runs/x/manifest.json"},
		{"s3://bucket/prefix/", "/k", "s3://bucket/prefix/k"},
		{"file:///srv/in", "a.csv", "file:///srv/in/a.csv"},
		{"mem://b", "in/users.csv", "mem://b/in/users.csv"},
		{"jobdesk-results", "runs/x", "s3://jobdesk-results/runs/x"},
	} {
		if got := e.objectURI(c.bucket, c.key); got != c.want {
			t.Errorf("objectURI(%q, %q) = %q, want %q", c.bucket, c.key, got, c.want)
		}
	}
}
