package assets

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// The window's words live as data, one JSON object (key → sentence) per language, so a
// translator edits a file and never Go code.
//
//go:embed translations/*.json
var translations embed.FS

//go:embed icon.png
var icon []byte

// Translations returns the JSON dictionary of language lang ("ja", "en").
func Translations(lang string) ([]byte, error) {
	return translations.ReadFile(path.Join("translations", lang+".json"))
}

// Languages returns the codes of every shipped translation, sorted.
func Languages() []string {
	entries, _ := fs.ReadDir(translations, "translations")
	var out []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Icon returns the application icon, a 512×512 PNG (the same file FyneApp.toml names).
func Icon() []byte { return icon }
