package csvfamily

import (
	"encoding/json"
	"strings"

	"jobdesk/app/family"
)

// ResultView describes a CSV import's result (engine/csvjob's aggregate): the rows accepted and
// rejected, the distinct entities of the layout and the key that counts them, the error files,
// and how the file was read. The layout's entity words (entity, entityEn) label the counts
// instead of showing as rows.
func (*Family) ResultView() family.ResultView {
	return family.ResultView{
		Outcome: []string{"reason"},
		Counts:  []string{"totalRecords", "successCount", "errorCount", "users", "usersChanged", "key", "table", "rows"},
		Files:   []string{"errorsCsv", "reportXlsx"},
		Method: []string{"encoding", "delimiter", "kind", "errorRecords", "errorsTruncated",
			"toleratedFailurePercentage", "toleratedFailureCount", "processingTimeSeconds", "columns"},
		Provenance: []string{"sha256"},
		Hidden:     []string{"entity", "entityEn"},
		Label:      entityLabel,
	}
}

// entityLabel words the label of a CSV result's count field k ("users", "usersChanged") from
// the entity its layout counts (the result's entity and entityEn: 社員 / employee → "社員数" /
// "Employees"); ok is false for other fields and for the user-log layout, whose fixed labels
// (field.users) say the same.
func entityLabel(obj map[string]json.RawMessage, k string) (en, ja string, ok bool) {
	if k != "users" && k != "usersChanged" {
		return "", "", false
	}
	var entity, entityEn, key string
	json.Unmarshal(obj["entity"], &entity)
	json.Unmarshal(obj["entityEn"], &entityEn)
	json.Unmarshal(obj["key"], &key)
	if entity == "" || entity == "ユーザー" && (entityEn == "" || entityEn == "user") {
		return "", "", false
	}
	plural := ""
	switch {
	case entityEn != "" && isASCIIWord(entityEn):
		plural = strings.ToUpper(entityEn[:1]) + entityEn[1:]
		if !strings.HasSuffix(plural, "s") {
			plural += "s"
		}
	case key != "":
		plural = "Distinct " + key
	default:
		plural = entity
	}
	if k == "users" {
		return plural, entity + "数", true
	}
	return plural + " changed", "更新した" + entity, true
}

func isASCIIWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return s != ""
}
