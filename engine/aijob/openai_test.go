package aijob

import "testing"

// FuzzOpenAIReply classifies any reply; the classifier is internal, so this test stays inside
// the package.
func FuzzOpenAIReply(f *testing.F) {
	f.Add([]byte(`{"choices":[{"message":{"content":"{}"}}],"usage":{"prompt_tokens":1}}`), 200)
	f.Add([]byte(`{"error":{"message":"quota","code":"insufficient_quota"}}`), 429)
	f.Fuzz(func(t *testing.T, body []byte, status int) {
		if status < 100 || status > 599 {
			return
		}
		e := httpError(status, body, true)
		if e.Kind == "" {
			t.Fatal("unclassified")
		}
		_ = e.JobError()
	})
}
