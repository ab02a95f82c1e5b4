package functions

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"jobdesk/engine/job"
)

func echo(tag string) job.Handler {
	return func(_ context.Context, in json.RawMessage, _ job.Reporter) (json.RawMessage, error) {
		return json.RawMessage(`"` + tag + `"`), nil
	}
}

func TestRegistry(t *testing.T) {
	var r Registry
	r.Add(Function{Name: "b", Handler: echo("b1")}, Function{Name: "a", Handler: echo("a"), Options: Options{Waits: true}})
	if got := r.Names(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("Names = %v", got)
	}
	r.Add(Function{Name: "b", Handler: echo("b2")})
	f, ok := r.Get("b")
	if !ok {
		t.Fatal("b not found")
	}
	out, _ := f.Handler(context.Background(), nil, job.Discard)
	if string(out) != `"b2"` {
		t.Fatalf("replaced function ran %s", out)
	}
	if _, ok := r.Get("c"); ok {
		t.Fatal("an unknown name was found")
	}
	if all := r.All(); len(all) != 2 || all[0].Name != "a" || !all[0].Options.Waits {
		t.Fatalf("All = %+v", all)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a function without a handler was accepted")
		}
	}()
	r.Add(Function{Name: "x"})
}
