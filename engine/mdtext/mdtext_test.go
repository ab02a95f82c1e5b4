package mdtext

import "testing"

func TestUnescape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`a\\b \q &#42; &#x3C; &bogus; &amp`, `a\b \q * < &bogus; &amp`},
		{`\*note\* 1\. &lt;div&gt; AT&amp;T`, `*note* 1. <div> AT&T`},
		{`&copy; &#X41; &#; &#x; &1a; \`, `© A &#; &#x; &1a; \`},
		{"平文", "平文"},
	} {
		if got := Unescape(tc.in); got != tc.want {
			t.Errorf("Unescape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
