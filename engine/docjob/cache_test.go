package docjob

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"jobdesk/engine/blob"
	"jobdesk/engine/blob/blobtest"
	"jobdesk/engine/job"
)

// TestBlobCache stores and finds results by key: another version, other options or other bytes
// are other objects, any key is one object name, and an unreadable object is "not stored".
func TestBlobCache(t *testing.T) {
	ctx := context.Background()
	s := blobtest.NewMem()
	c := BlobCache{Store: s, Prefix: "mem://bucket/cache"}
	sha := strings.Repeat("ab", 32)
	k := Key{SHA256: sha, Version: Version, Options: "furigana=false;ocr=true"}
	if _, found, err := c.Get(ctx, k); found || err != nil {
		t.Fatalf("empty cache: %v %v", found, err)
	}
	want := Result{Status: StatusFailed, Name: "a.pdf", SHA256: sha, Kind: KindPDF, Version: Version,
		Error: job.Errorf(job.E005, "locked").WithJa("保護されています。")}
	if err := c.Put(ctx, k, want); err != nil {
		t.Fatal(err)
	}
	got, found, err := c.Get(ctx, k)
	if err != nil || !found || got.Name != "a.pdf" || got.Kind != KindPDF || got.Error == nil || got.Error.Code != job.E005 || got.Error.MessageJa == "" {
		t.Fatalf("get: %+v %v %v", got, found, err)
	}
	for _, other := range []Key{
		{SHA256: sha, Version: "docjob/0", Options: k.Options},
		{SHA256: sha, Version: Version, Options: "furigana=true;ocr=true"},
		{SHA256: strings.Repeat("cd", 32), Version: Version, Options: k.Options},
	} {
		if _, found, _ := c.Get(ctx, other); found {
			t.Fatalf("%+v found the result of %+v", other, k)
		}
	}
	objs, _ := s.List(ctx, "mem://bucket/cache/")
	if len(objs) != 1 || !strings.HasPrefix(objs[0].URI, "mem://bucket/cache/"+strings.ReplaceAll(Version, "/", "%2F")+"/ab/"+sha+"_") ||
		strings.ContainsAny(strings.TrimPrefix(objs[0].URI, "mem://"), ";=") {
		t.Fatalf("objects %+v", objs)
	}
	s.Put(objs[0].URI, []byte("{not json"))
	if _, found, err := c.Get(ctx, k); found || err != nil {
		t.Fatalf("damaged object: %v %v", found, err)
	}
}

// TestHandlerWithoutLocalFiles runs a ZIP through the workflow's modes with input, output and
// cache all in a store of another scheme (as in S3): every file the converter writes lands under
// the job's output prefix, and a second conversion reuses the cached result.
func TestHandlerWithoutLocalFiles(t *testing.T) {
	ctx := context.Background()
	s := blobtest.NewMem()
	mux := blob.NewMux(blob.Local{})
	mux.Handle("mem", s)
	c := NewConverter(BlobCache{Store: mux, Prefix: "mem://bucket/cache"}, mux)
	if err := blob.WriteAll(ctx, s, "mem://bucket/in/bundle.zip", makeZip(t, []zipEntry{
		{name: "a.csv", data: readCorpus(t, "sjis.csv")},
		{name: "資料/b.txt", data: []byte("本文です。\n")},
	})); err != nil {
		t.Fatal(err)
	}
	call := func(in Input) Result {
		t.Helper()
		raw, _ := json.Marshal(in)
		out, err := c.Handle(job.WithInfo(ctx, job.Info{ID: 9, Output: "mem://bucket/jobs/9"}), raw, job.Discard)
		if err != nil {
			t.Fatalf("%s %s: %v", in.Mode, in.Path, err)
		}
		var res Result
		json.Unmarshal(out, &res)
		return res
	}
	zip := "mem://bucket/in/bundle.zip"
	if ing := call(Input{Path: zip, Mode: ModeIngest}); ing.Kind != KindZIP || ing.Cached {
		t.Fatalf("ingest %+v", ing)
	}
	ex := call(Input{Path: zip, Mode: ModeExtract})
	if len(ex.Entries) != 2 {
		t.Fatalf("extract %+v", ex)
	}
	var children []json.RawMessage
	for _, e := range ex.Entries {
		if !strings.HasPrefix(e.Path, "mem://bucket/jobs/9/entries/"+ex.SHA256[:16]+"/") {
			t.Fatalf("entry written to %s", e.Path)
		}
		b, _ := json.Marshal(call(Input{Path: e.Path, Name: e.Name, Depth: 1}))
		children = append(children, b)
	}
	col := call(Input{Path: zip, Mode: ModeCollect, Children: children})
	if col.Status != StatusReady || col.OutputPath != "mem://bucket/jobs/9/documents/"+OutputName("bundle.zip", col.SHA256) {
		t.Fatalf("collect %+v", col)
	}
	md, err := blob.ReadAll(ctx, s, col.OutputPath)
	if err != nil || !strings.Contains(string(md), "| 山田太郎 | 総務部 | 1001 |") || !strings.Contains(string(md), "# 資料/b.txt") {
		t.Fatalf("collected %q %v", md, err)
	}
	if again := call(Input{Path: zip, Mode: ModeIngest}); !again.Cached || again.OutputPath != col.OutputPath {
		t.Fatalf("second ingest %+v", again)
	}
	var buf bytes.Buffer
	if err := c.ExportMarkdown(ctx, mustJSON(t, col), &buf); err != nil || buf.String() != string(md) {
		t.Fatalf("export %v", err)
	}
	if _, err := c.Handle(ctx, mustJSON(t, Input{Path: "mem://bucket/in/missing.pdf"}), job.Discard); codeOf(err) != job.E014 {
		t.Fatalf("missing input: %v", err)
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
