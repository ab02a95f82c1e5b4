package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"

	"jobdesk/engine/csvjob"
	"jobdesk/engine/docjob"
	"jobdesk/engine/job"
)

// This file is the device's settings behind the window's settings pages, kept in the data
// folder as settings.json so that the command line and a hand edit see the same values. The AI
// page has its own file, ai.json (SaveAISettings in ai_settings.go).

// SettingsFile is the settings file's name in the data folder.
const SettingsFile = "settings.json"

// Settings are the device's preferences for jobs started from the window.
type Settings struct {
	CSV    CSVSettings    `json:"csv"`
	Docs   DocSettings    `json:"documents"`
	Engine EngineSettings `json:"engine"`
	// Theme is "light", "dark" or "system" (the default).
	Theme string `json:"theme,omitempty"`
	// Notify turns desktop notifications for finished jobs on (the default) or off.
	Notify *bool `json:"notify,omitempty"`
}

// CSVSettings are the CSV page's defaults: the tolerance of bad rows (seed 004: 5 %, 50 rows).
type CSVSettings struct {
	TolerancePercent float64 `json:"tolerate_percent"`
	ToleranceCount   int     `json:"tolerate_count"`
}

// DocSettings are the documents page's: OCR of scanned pages, furigana, the page limit.
type DocSettings struct {
	OCR      bool `json:"ocr"`
	Furigana bool `json:"furigana"`
	MaxPages int  `json:"max_pages"`
}

// EngineSettings are the engine page's: how many jobs run at once (0: the number of CPUs). The
// engine reads it when it starts, so a change applies at the next start.
type EngineSettings struct {
	Workers int `json:"workers"`
}

// DefaultSettings are the settings of a data folder without settings.json.
func DefaultSettings() Settings {
	return Settings{
		CSV:   CSVSettings{TolerancePercent: csvjob.DefaultTolerancePercent, ToleranceCount: csvjob.DefaultToleranceCount},
		Docs:  DocSettings{OCR: true, MaxPages: docjob.DefaultMaxPages},
		Theme: "system",
	}
}

// NotifyOn reports whether desktop notifications are on.
func (s Settings) NotifyOn() bool { return s.Notify == nil || *s.Notify }

// LoadSettings reads settings.json of dataDir over the defaults; a missing file is the defaults.
func LoadSettings(dataDir string) (Settings, error) {
	s := DefaultSettings()
	b, err := os.ReadFile(filepath.Join(dataDir, SettingsFile))
	if os.IsNotExist(err) {
		return s, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	if err != nil {
		return DefaultSettings(), job.Wrap(job.E014, err, "the settings file settings.json cannot be read").
			WithJa("設定ファイル settings.json を読み取れません。")
	}
	return s, nil
}

// Settings returns the data folder's settings (the defaults when the file is unreadable).
func (a *App) Settings() Settings {
	s, _ := LoadSettings(a.DataDir())
	return s
}

// SaveSettings checks s and writes settings.json.
func (a *App) SaveSettings(s Settings) error {
	switch {
	case s.CSV.TolerancePercent < 0 || s.CSV.TolerancePercent > 100:
		return job.Errorf(job.E014, "the tolerance must be a percentage from 0 to 100").WithJa("許容率は 0 から 100 までの数で指定してください。")
	case s.CSV.ToleranceCount < 0:
		return job.Errorf(job.E014, "the tolerated count must be 0 or more").WithJa("許容件数は 0 以上で指定してください。")
	case s.Docs.MaxPages < 0:
		return job.Errorf(job.E014, "the page limit must be 0 or more").WithJa("ページ数の上限は 0 以上で指定してください。")
	case s.Engine.Workers < 0 || s.Engine.Workers > 256:
		return job.Errorf(job.E014, "the number of jobs at once must be from 0 to 256").WithJa("同時に実行するジョブ数は 0 から 256 までで指定してください。")
	}
	switch s.Theme {
	case "", "system", "light", "dark":
	default:
		return job.Errorf(job.E014, "unknown theme %q (light, dark or system)", s.Theme).WithJa("テーマは light / dark / system のいずれかです。")
	}
	b, err := marshalIndent(s)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(a.DataDir(), SettingsFile), b)
}

// SubmitExtra is the run options (SubmitOptions.Extra) the settings give a job started from the
// window: the CSV tolerance and the documents' OCR, furigana and page limit. The page limit
// ("max-pages") reaches the converter once the documents family reads that run option.
func (s Settings) SubmitExtra() map[string]string {
	// Only what differs from the defaults: a job started with the defaults is the same job as
	// one the command line starts without options (the same file is then recognised).
	extra := map[string]string{}
	if s.CSV.TolerancePercent != csvjob.DefaultTolerancePercent {
		extra["tolerate-percent"] = strconv.FormatFloat(s.CSV.TolerancePercent, 'f', -1, 64)
	}
	if s.CSV.ToleranceCount != csvjob.DefaultToleranceCount {
		extra["tolerate-count"] = strconv.Itoa(s.CSV.ToleranceCount)
	}
	if !s.Docs.OCR {
		extra["no-ocr"] = "true"
	}
	if s.Docs.Furigana {
		extra["furigana"] = "true"
	}
	if s.Docs.MaxPages > 0 && s.Docs.MaxPages != docjob.DefaultMaxPages {
		extra["max-pages"] = strconv.Itoa(s.Docs.MaxPages)
	}
	return extra
}
