package csvjob

import (
	"bufio"
	"context"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
)

// errorsHeader is the errors CSV's header row (Japanese first: the file is for office staff).
var errorsHeader = []string{"行 line", "列 column", "値 value", "種別 kind", "理由", "reason"}

func csvQuote(w *bufio.Writer, s string) {
	if !strings.ContainsAny(s, ",\"\r\n") {
		w.WriteString(s)
		return
	}
	w.WriteByte('"')
	w.WriteString(strings.ReplaceAll(s, `"`, `""`))
	w.WriteByte('"')
}

// writeErrorsCSV writes the rejected rows to the object uri as UTF-8 with a BOM (so Excel opens
// it as UTF-8), CRLF.
func writeErrorsCSV(ctx context.Context, bs blob.Store, uri string, errs []RowError) error {
	f, err := bs.Create(ctx, uri)
	if err != nil {
		return job.Wrap(job.E009, err, "cannot write the errors file").WithJa("エラーファイルを書き込めません。").Transient().WithName("TemporaryError")
	}
	defer f.Abort()
	w := bufio.NewWriterSize(f, 256<<10)
	w.WriteString("\uFEFF")
	for i, h := range errorsHeader {
		if i > 0 {
			w.WriteByte(',')
		}
		csvQuote(w, h)
	}
	w.WriteString("\r\n")
	for _, e := range errs {
		w.WriteString(strconv.Itoa(e.Line))
		w.WriteByte(',')
		csvQuote(w, e.Column)
		w.WriteByte(',')
		csvQuote(w, e.Value)
		w.WriteByte(',')
		csvQuote(w, e.Kind)
		w.WriteByte(',')
		csvQuote(w, e.ReasonJa)
		w.WriteByte(',')
		csvQuote(w, e.Reason)
		w.WriteString("\r\n")
	}
	if err := w.Flush(); err != nil {
		return job.Wrap(job.E009, err, "cannot write the errors file").WithJa("エラーファイルを書き込めません。").Transient().WithName("TemporaryError")
	}
	if err := f.Commit(); err != nil {
		return job.Wrap(job.E009, err, "cannot write the errors file").WithJa("エラーファイルを書き込めません。").Transient().WithName("TemporaryError")
	}
	return nil
}

// Sheet names of the report workbook.
const (
	SheetSummary = "概要 Summary"
	SheetErrors  = "エラー Errors"
)

// countLabel is the summary sheet's label of a count of the layout's entity, in Japanese and
// English ("社員数 employees", with prefix 更新: "更新社員数 employees changed"); the user-log
// layout's reads "ユーザー数 users".
func countLabel(s *Summary, prefix string) string {
	ja, en := s.Entity, s.EntityEn
	if ja == "" {
		ja, en = "ユーザー", "user"
	}
	switch {
	case en == "" || !isASCII([]byte(en)):
		en = "distinct " + s.Key
	case !strings.HasSuffix(en, "s"):
		en += "s"
	}
	if prefix != "" {
		en += " changed"
	}
	return prefix + ja + "数 " + en
}

// writeReport writes the XLSX workbook to the object uri: a summary sheet (totals and per-column
// statistics) and an errors sheet (streamed, so a large error list stays cheap).
func writeReport(ctx context.Context, bs blob.Store, uri string, s *Summary, errs []RowError) error {
	f := excelize.NewFile()
	defer f.Close()
	if err := f.SetSheetName("Sheet1", SheetSummary); err != nil {
		return job.Wrap(job.E016, err, "cannot build the report")
	}
	rows := [][]any{
		{"項目 item", "値 value"},
		{"状態 status", s.Status},
		{"ファイル file", s.Source},
		{"SHA-256", s.SHA256},
		{"文字コード encoding", s.Encoding},
		{"区切り文字 delimiter", delimName(s.Delimiter)},
		{"総行数 rows", s.TotalRows},
		{"成功 accepted", s.SuccessCount},
		{"エラー rejected", s.ErrorCount},
		{countLabel(s, ""), s.Users},
		{countLabel(s, "更新"), s.UsersChanged},
		{"テーブル table", s.Table},
		{"許容率 tolerated %", s.TolerancePercent},
		{"許容件数 tolerated rows", s.ToleranceCount},
		{"処理時間 seconds", s.ProcessingTimeSeconds},
		{"実行名 execution", s.ExecutionID},
		{"概要", s.MessageJa},
		{"summary", s.Message},
		{},
		{"列 column", "型 type", "件数 count", "空 empty", "不正 invalid", "最小 min", "最大 max", "合計 sum", "重複なし distinct"},
	}
	for _, c := range s.Columns {
		row := []any{c.Name, c.Type, c.Count, c.Empty, c.Invalid}
		switch c.Type {
		case TypeInteger, TypeDecimal:
			row = append(row, c.Min, c.Max, c.Sum)
		case TypeDate:
			row = append(row, c.MinText, c.MaxText, "")
		default:
			row = append(row, "", "", "")
		}
		if c.Distinct > 0 {
			row = append(row, c.Distinct)
		}
		rows = append(rows, row)
	}
	for i, r := range rows {
		if len(r) == 0 {
			continue
		}
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow(SheetSummary, cell, &r); err != nil {
			return job.Wrap(job.E016, err, "cannot build the report")
		}
	}
	f.SetColWidth(SheetSummary, "A", "A", 28)
	f.SetColWidth(SheetSummary, "B", "B", 40)
	if _, err := f.NewSheet(SheetErrors); err != nil {
		return job.Wrap(job.E016, err, "cannot build the report")
	}
	sw, err := f.NewStreamWriter(SheetErrors)
	if err != nil {
		return job.Wrap(job.E016, err, "cannot build the report")
	}
	hdr := make([]any, len(errorsHeader))
	for i, h := range errorsHeader {
		hdr[i] = h
	}
	if err := sw.SetRow("A1", hdr); err != nil {
		return job.Wrap(job.E016, err, "cannot build the report")
	}
	for i, e := range errs {
		if i+2 > excelize.TotalRows {
			break
		}
		cell, _ := excelize.CoordinatesToCellName(1, i+2)
		if err := sw.SetRow(cell, []any{e.Line, e.Column, e.Value, e.Kind, e.ReasonJa, e.Reason}); err != nil {
			return job.Wrap(job.E016, err, "cannot build the report")
		}
	}
	if err := sw.Flush(); err != nil {
		return job.Wrap(job.E016, err, "cannot build the report")
	}
	w, err := bs.Create(ctx, uri)
	if err == nil {
		defer w.Abort()
		if err = f.Write(w); err == nil {
			err = w.Commit()
		}
	}
	if err != nil {
		return job.Wrap(job.E009, err, "cannot write the report").WithJa("レポートを書き込めません。").Transient().WithName("TemporaryError")
	}
	return nil
}

func delimName(d string) string {
	switch d {
	case "\t":
		return "TAB"
	case ",":
		return ", (comma)"
	case ";":
		return "; (semicolon)"
	case "|":
		return "| (bar)"
	}
	return d
}
