package job

import "testing"

func TestErrorFromCause(t *testing.T) {
	coded := Errorf(E005, "report.pdf is password-protected").WithName("PasswordProtected")
	lambda := `{"errorType":"PasswordProtected","errorMessage":` + quote(coded.CauseJSON()) + `}`
	tests := []struct {
		name, errName, cause string
		code                 Code
		wantName             string
		ok                   bool
	}{
		{"device cause", "PasswordProtected", coded.CauseJSON(), E005, "PasswordProtected", true},
		{"lambda envelope", "PasswordProtected", lambda, E005, "PasswordProtected", true},
		{"workflow's own", "States.Timeout", "処理時間が制限を超えました", E015, "States.Timeout", false},
		{"unknown code", "X", `{"code":"E999","message":"m"}`, E015, "X", false},
		{"empty", "", "", E015, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := ErrorFromCause(tc.errName, tc.cause)
			if ok != tc.ok || e.Code != tc.code || e.Name != tc.wantName {
				t.Fatalf("ErrorFromCause = %+v, %v", e, ok)
			}
			if ok && (e.Message != coded.Message || e.MessageJa != coded.MessageJa || e.Retryable != coded.Retryable) {
				t.Fatalf("coded error not read back whole: %+v", e)
			}
			if !ok && tc.cause != "" && e.Cause != tc.cause {
				t.Fatalf("the workflow's own cause was lost: %+v", e)
			}
		})
	}
}

func quote(s string) string {
	b := []byte{'"'}
	for _, r := range s {
		switch r {
		case '"', '\\':
			b = append(b, '\\', byte(r))
		default:
			b = append(b, string(r)...)
		}
	}
	return string(append(b, '"'))
}
