package textwidth

import "testing"

func TestOf(t *testing.T) {
	for s, want := range map[string]int{"": 0, "abc": 3, "売上": 4, "ﾃｽﾄ": 3, "Ｕ１": 4, "A売1": 4} {
		if got := Of(s); got != want {
			t.Errorf("Of(%q) = %d, want %d", s, got, want)
		}
	}
}
