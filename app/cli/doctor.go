package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"jobdesk/app"
)

var doctorCommand = Command{"doctor", "doctor [--restore [FILE]] [--json]",
	"check the database fully; --restore brings back the newest good backup (or FILE) and keeps the damaged file beside it",
	(*CLI).cmdDoctor}

// cmdDoctor checks the database without opening the App, so it works on a damaged database,
// which every other command refuses.
func (c *CLI) cmdDoctor(args []string) int {
	fs := c.Flags("doctor")
	restore := fs.Bool("restore", false, "restore the newest backup that passes the check (or the FILE given)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	pos, err := Parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) > 1 || (len(pos) == 1 && !*restore) {
		return c.Usage("doctor takes a backup FILE only with --restore", "doctor にファイルを指定できるのは --restore のときだけです。")
	}
	if *restore {
		from := ""
		if len(pos) == 1 {
			from = pos[0]
		}
		restored, movedTo, err := app.Restore(c.dataDir, from)
		if err != nil {
			return c.Fail(err)
		}
		fmt.Fprintf(c.Stdout, "restored %s\n", restored)
		fmt.Fprintf(c.Stdout, "バックアップ %s を復元しました。\n", restored)
		if movedTo != "" {
			fmt.Fprintf(c.Stdout, "the replaced database is kept as %s (置き換えたデータベースは %s に残しました)\n", movedTo, movedTo)
		}
		return ExitOK
	}
	r, err := app.Doctor(c.dataDir)
	if err != nil {
		return c.Fail(err)
	}
	if *asJSON {
		enc := json.NewEncoder(c.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(r)
	} else {
		switch {
		case !r.Exists:
			fmt.Fprintf(c.Stdout, "%s: no database yet (まだデータベースがありません)\n", r.Path)
		case r.OK:
			fmt.Fprintf(c.Stdout, "%s: OK, checked in %s (問題は見つかりませんでした)\n", r.Path, r.Took.Round(1e6))
		default:
			fmt.Fprintf(c.Stdout, "%s: DAMAGED (データベースが壊れています)\n", r.Path)
			for _, p := range r.Problems {
				fmt.Fprintf(c.Stdout, "  %s\n", p)
			}
			en, ja := app.RepairHint(filepath.Dir(r.Path))
			fmt.Fprintln(c.Stdout, en+".")
			fmt.Fprintln(c.Stdout, ja)
		}
		for _, b := range r.Backups {
			fmt.Fprintf(c.Stdout, "backup: %s (%s, %d bytes)\n", b.Path, b.At.Local().Format("2006-01-02 15:04"), b.Size)
		}
	}
	if r.Exists && !r.OK {
		return ExitFailed
	}
	return ExitOK
}
