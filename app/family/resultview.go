package family

import "encoding/json"

// ResultDescriber is a family that says how its results read for people: which of the fields
// its handlers and workflows write are shown, under which label, in what order, which figures
// sum a result up, and which only machines read. The app merges every family's description into
// one vocabulary (a workflow job's result carries the fields of the family workflow it ran) and
// lays a result out from it; a window renders that in its own language and names no family's
// fields.
type ResultDescriber interface {
	ResultView() ResultView
}

// ResultView is a family's description of its results. Field names are as the family writes
// them (JSON keys); a shown field has a label under "field.<name>" in assets/translations. The
// fields are listed by part, each part in the order to show them; the app shows the parts in
// the order of the struct (what happened, the figures, the files, how, where it came from), so
// a field two families write (reason, sha256) sits where both lists put it.
type ResultView struct {
	// Outcome are the fields that say what happened ("reason").
	Outcome []string
	// Counts are the result's figures and the things it is about (rows accepted, pages, a goal).
	Counts []string
	// Files are the files the job wrote, which a window offers to open.
	Files []string
	// Method are the fields that say how the job went about it (encoding, OCR pages, notes).
	Method []string
	// Provenance are the fields that say where the result came from (reused, converter, digest).
	Provenance []string
	// Hidden are the fields only machines read, or that a window shows in a view of its own.
	Hidden []string
	// Summary are the figures worth a place in a result's one-line summary, in order; a digest
	// comes after every other figure.
	Summary []SummaryFigure
	// Label words the label of a field from the result itself (a CSV layout names its own
	// entity: 社員数 / Employees); ok false keeps the field's fixed label. Nil: no such labels.
	Label func(result map[string]json.RawMessage, field string) (en, ja string, ok bool)
	// Hide reports the fields a result holds that say nothing of it (a figure the format
	// does not have, such as a Word document's page count, always 1): left out of its rows and
	// its summary. Nil: none.
	Hide func(result map[string]json.RawMessage, field string) bool
}

// SummaryFigure is a result field worth a place in a one-line summary.
type SummaryFigure struct {
	// Field is the result's field, a whole number (or, for a digest, a hex string).
	Field string
	// Words is the translation key of the figure's words, with %s for the value
	// ("result.pages"); a Words+".one" sentence, where one exists, words a figure of 1.
	Words string
	// Digest marks a hex digest: shown shortened, and only when at most one figure precedes it.
	Digest bool
	// By and ByWords word the figure by the value of another field of the result: where the
	// result's field By holds a value ByWords has, that translation key replaces Words (a
	// conversion's pages are a deck's slides, a workbook's sheets, a book's chapters).
	By      string
	ByWords map[string]string
}

// Parts returns v's shown fields part by part, in the order they are shown.
func (v ResultView) Parts() [][]string {
	return [][]string{v.Outcome, v.Counts, v.Files, v.Method, v.Provenance}
}
