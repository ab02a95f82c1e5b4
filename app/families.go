package app

import (
	"jobdesk/app/aifamily"
	"jobdesk/app/checksumfamily"
	"jobdesk/app/convertfamily"
	"jobdesk/app/csvfamily"
	"jobdesk/app/family"
)

// newFamilies returns a fresh value of every job family: the one place that lists them. Each
// App keeps its own values, which hold the families' typed state once opened. The order is the
// order in which they are asked to take a dropped file: the CSV family before conversion (a
// .csv is a CSV job), images before conversion, and the checksum family, which takes anything,
// last.
func newFamilies() []family.Family {
	return []family.Family{
		&csvfamily.Family{},
		&aifamily.Family{},
		&convertfamily.Family{},
		&checksumfamily.Family{},
	}
}

// Types returns the job types a person can ask for.
func Types() []string {
	var out []string
	for _, f := range newFamilies() {
		out = append(out, f.Types()...)
	}
	return out
}

// DetectType picks the job type for a dropped file: the first family (in newFamilies' order)
// that takes it.
func DetectType(path string) string { return detectType(newFamilies(), path) }

func detectType(fams []family.Family, path string) string {
	head := family.ReadHead(path)
	for _, f := range fams {
		if t := f.Detect(path, head); t != "" {
			return t
		}
	}
	return ""
}

// RunFlags returns the families' own `jobdesk run` flags, each name once; their values reach
// the families in SubmitOptions.Extra.
func RunFlags() []family.RunFlag {
	var out []family.RunFlag
	seen := map[string]bool{}
	for _, f := range newFamilies() {
		ff, ok := f.(family.Flagged)
		if !ok {
			continue
		}
		for _, rf := range ff.RunFlags() {
			if !seen[rf.Name] {
				seen[rf.Name] = true
				out = append(out, rf)
			}
		}
	}
	return out
}

// FamilyOf returns a's family of type T (a *csvfamily.Family, …), for the commands that use a
// family's own typed API (`jobdesk goals`, `jobdesk generate`, …).
func FamilyOf[T family.Family](a *App) (T, bool) {
	for _, f := range a.families {
		if t, ok := f.(T); ok {
			return t, true
		}
	}
	var zero T
	return zero, false
}

// familyOf returns the family in fams that offers typ.
func familyOf(fams []family.Family, typ string) (family.Family, bool) {
	for _, f := range fams {
		for _, t := range f.Types() {
			if t == typ {
				return f, true
			}
		}
	}
	return nil, false
}
