// Package syslocale makes a "C.UTF-8" or "POSIX.UTF-8" locale (the default of containers, CI
// runners and minimal installs) read as "no language preference, English" before the window
// toolkit looks at it. The toolkit takes the "C" of such a locale for a language tag and logs
// "Error parsing user locale C" on every start, even for `jobdesk --help`.
//
// It is imported by main for its side effect. Its initialisation runs before the toolkit's: it
// needs nothing but os and strings, and Go initialises a package as soon as its imports are.
package syslocale

import (
	"os"
	"strings"
)

func init() { Normalize() }

// Normalize sets LANGUAGE=en when the locale in effect (LC_ALL, else LC_MESSAGES, else LANG) is
// C or POSIX with a charset and LANGUAGE is unset. Locale lookups then answer English instead of
// failing; programs JobDesk starts are unaffected, since gettext ignores LANGUAGE under the C
// locale, and the charset (UTF-8) is left as it is.
func Normalize() {
	if os.Getenv("LANGUAGE") != "" {
		return
	}
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		v := os.Getenv(k)
		if v == "" {
			continue
		}
		name, _, _ := strings.Cut(v, ".")
		name, _, _ = strings.Cut(name, "@")
		if v != name && (name == "C" || name == "POSIX") {
			os.Setenv("LANGUAGE", "en")
		}
		return
	}
}
