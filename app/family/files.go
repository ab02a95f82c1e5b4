package family

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"jobdesk/engine/job"
)

// WriteFileAtomic writes data to path through a temporary file in the same folder, so a reader
// never sees half a file. A folder that cannot be written is refused with E014 asking for
// another one.
func WriteFileAtomic(path string, data []byte) error {
	fail := func(err error) error {
		return job.Wrap(job.E014, err, "the file could not be written there; choose another folder").
			WithJa("そこにはファイルを書き込めませんでした。別の保存先を選んでください。")
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".jobdesk-save-*")
	if err != nil {
		return fail(err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fail(err)
	}
	return nil
}

// IndentedJSON is v as indented JSON without HTML escapes (settings and schemas hold < and >),
// ending in a newline, as people edit such files by hand.
func IndentedJSON(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}
