package jsonata

import (
	"fmt"
	"sync"
	"testing"
)

// Built-in functions are shared by all evaluations; one that takes the context as its
// argument ($uppercase() on the current value) must see its own evaluation's context even
// when many evaluations run at once (a Map state's iterations).
func TestConcurrentEvaluationsKeepTheirContext(t *testing.T) {
	e, err := Compile(`words.$uppercase()`)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				w := fmt.Sprintf("w%d_%d", g, i)
				v, _, err := e.Eval(map[string]any{"words": []any{w, w}}, nil)
				if err != nil || js(v) != fmt.Sprintf(`["W%d_%d","W%d_%d"]`, g, i, g, i) {
					errs <- fmt.Sprintf("%s: %s %v", w, js(v), err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
