package aijob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"jobdesk/engine/blob"
	"jobdesk/engine/job"
)

// Item is one requirement of the eligibility JSON.
type Item struct {
	Key    string `json:"key"`
	Text   string `json:"text"`
	Source string `json:"source,omitempty"`
}

// Eligibility is seed 003 Job D's eligibility JSON.
type Eligibility struct {
	Must        []Item   `json:"must"`
	NeedCheck   []Item   `json:"need_check"`
	MustNot     []Item   `json:"must_not"`
	RiskFlags   []Item   `json:"risk_flags"`
	MissingKeys []string `json:"missing_keys"`
}

// Fallback levels of seed 003 Job D.
const (
	LevelModel    = 0 // the model answered
	LevelFallback = 1 // the fallback model answered
	LevelHeadings = 2 // heading-based extraction: structure only, details need checking
	LevelMinimal  = 3 // minimal JSON: missing_keys and need_check only
)

// EligibilityResult is ELIGIBILITY_EXTRACT's result.
type EligibilityResult struct {
	Path             string      `json:"path"`
	SourceJobID      int64       `json:"source_job_id,omitempty"`
	ContentHash      string      `json:"content_hash"`
	Cached           bool        `json:"cached"`
	FallbackLevel    int         `json:"fallback_level"`
	MustCount        int         `json:"must_count"`
	NeedCheckCount   int         `json:"need_check_count"`
	MustNotCount     int         `json:"must_not_count"`
	RiskFlagsCount   int         `json:"risk_flags_count"`
	MissingKeysCount int         `json:"missing_keys_count"`
	Eligibility      Eligibility `json:"eligibility"`
	Usage            *Usage      `json:"usage,omitempty"`
	Reason           string      `json:"reason,omitempty"`
}

// EligibilityKeys are the keys a complete extraction covers; those not found are missing_keys.
var EligibilityKeys = []string{"target_business", "company_size", "region", "industry", "application_period", "subsidy_amount", "eligible_expenses"}

// MaxEligibilityChars bounds the Markdown sent to the model.
const MaxEligibilityChars = 60000

// Eligibility is ELIGIBILITY_EXTRACT (seed 003 Job D): the Markdown of converted documents
// becomes the eligibility JSON. Fallbacks: the fallback model (level 1), heading-based
// extraction (level 2), minimal JSON (level 3); levels 2 and 3 end PARTIAL. Results are cached by
// content hash for CacheTTL.
func (s *Service) Eligibility(ctx context.Context, input json.RawMessage, r job.Reporter) (json.RawMessage, error) {
	var in FileInput
	if err := decodeInput(input, &in); err != nil {
		return nil, err
	}
	raw, err := blob.ReadAll(ctx, s.blobs(), in.Path)
	if r := blob.Refused(err); r != nil {
		return nil, r
	}
	if err != nil {
		return nil, job.Wrap(job.E014, err, "the document cannot be read").WithJa("文書ファイルが見つからないか、読み取れません。")
	}
	if !utf8.Valid(raw) {
		return nil, job.Errorf(job.E004, "the document is not UTF-8 Markdown").WithJa("文書が UTF-8 の Markdown ではありません。")
	}
	md := string(raw)
	sum := sha256.Sum256(raw)
	hash := hex.EncodeToString(sum[:])
	res := EligibilityResult{Path: in.Path, SourceJobID: in.SourceJobID, ContentHash: hash}
	if e, level, ok := s.cachedEligibility(ctx, hash); ok {
		res.Cached, res.FallbackLevel, res.Eligibility = true, level, e
		return s.finishEligibility(ctx, res, r)
	}
	r.Progress(10, "Asking the model")
	if len([]rune(md)) > MaxEligibilityChars {
		md = string([]rune(md)[:MaxEligibilityChars])
	}
	prompt := "次の公募要領（Markdown）から応募要件を抽出してください。must は必須要件、need_check は確認が必要な要件、must_not は対象外となる条件、risk_flags は注意点、missing_keys は文書に記載がない項目キー（" +
		strings.Join(EligibilityKeys, ", ") + "）です。各項目の key には該当する項目キーを使ってください。\n\n" + md
	req := Request{System: "あなたは補助金の公募要領を読み解く専門家です。指定された JSON スキーマに厳密に従って出力してください。", Prompt: prompt}
	var e Eligibility
	_, err = s.generate(ctx, s.Provider, "eligibility", req, EligibilitySchema, &e)
	level := LevelModel
	if err != nil && !IsOffline(err) && !isCtxErr(ctx) && !fallsBack(err, s.Fallback != nil) {
		return nil, err // busy or unreachable after its call's retries; refused: fails at once (E007)
	}
	if err != nil && !IsOffline(err) && !isCtxErr(ctx) {
		r.Progress(40, "Retrying with the fallback model")
		fb := s.Fallback
		if fb == nil {
			fb = s.Provider
		}
		e = Eligibility{}
		_, err = s.generate(ctx, fb, "eligibility-fallback", req, EligibilitySchema, &e)
		level = LevelFallback
	}
	if IsOffline(err) {
		return nil, s.deferOffline(err)
	}
	if err != nil {
		if isCtxErr(ctx) || !fallsBack(err, false) {
			return nil, err
		}
		r.Progress(70, "Extracting by headings")
		res.Reason = job.AsError(err).Message
		e, level = HeadingExtract(md), LevelHeadings
		if len(e.Must)+len(e.NeedCheck)+len(e.MustNot) == 0 {
			e, level = MinimalEligibility(md), LevelMinimal
		}
	}
	normalize(&e)
	res.FallbackLevel, res.Eligibility = level, e
	// Only what a model extracted is kept for 7 days: a heading-based or minimal result is made
	// again next time, when the model may answer.
	if level <= LevelFallback && s.Cache != nil {
		_ = s.Cache.CacheEligibility(ctx, hash, CachedEligibility{Eligibility: e, Level: level, At: s.now()})
	}
	return s.finishEligibility(ctx, res, r)
}

func isCtxErr(ctx context.Context) bool { return ctx.Err() != nil }

// fallsBack reports whether a failed model call goes down the seed's fallback levels (the reply
// was unusable, or the request was refused as such). A busy or unreachable service is not a
// reason to extract less, whether it will be retried or its call's own retries gave up: the
// error is returned. Exhausted quota or refused credentials fail the job at once, unless another
// provider (the fallback model's) can still be asked.
func fallsBack(err error, otherProvider bool) bool {
	je := job.AsError(err)
	if je == nil || je.Retryable || Kind(je.Name).busy() {
		return false
	}
	if je.Name == string(KindQuota) || je.Name == string(KindAuth) {
		return otherProvider
	}
	return true
}

func (s *Service) finishEligibility(ctx context.Context, res EligibilityResult, r job.Reporter) (json.RawMessage, error) {
	e := res.Eligibility
	res.MustCount, res.NeedCheckCount, res.MustNotCount = len(e.Must), len(e.NeedCheck), len(e.MustNot)
	res.RiskFlagsCount, res.MissingKeysCount = len(e.RiskFlags), len(e.MissingKeys)
	if owner := s.ownerJob(ctx); owner != 0 {
		if u, err := s.JobUsage(ctx, owner); err == nil && u.Calls > 0 {
			res.Usage = &u
		}
	}
	out, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	r.Progress(100, "Eligibility extracted")
	if res.FallbackLevel >= LevelHeadings {
		return nil, job.PartialSuccess(out, fmt.Sprintf("the model's reply was unusable; fallback level %d (details need checking)", res.FallbackLevel))
	}
	return out, nil
}

// cachedEligibility returns the cached extraction of content hash unless it is older than
// CacheTTL.
func (s *Service) cachedEligibility(ctx context.Context, hash string) (Eligibility, int, bool) {
	if s.Cache == nil {
		return Eligibility{}, 0, false
	}
	c, ok, err := s.Cache.CachedEligibility(ctx, hash)
	if err != nil || !ok {
		return Eligibility{}, 0, false
	}
	ttl := s.CacheTTL
	if ttl <= 0 {
		ttl = 7 * 24 * time.Hour
	}
	if s.now().UnixMilli()-c.At.UnixMilli() > ttl.Milliseconds() {
		return Eligibility{}, 0, false
	}
	return c.Eligibility, c.Level, true
}

func normalize(e *Eligibility) {
	for _, p := range []*[]Item{&e.Must, &e.NeedCheck, &e.MustNot, &e.RiskFlags} {
		if *p == nil {
			*p = []Item{}
		}
	}
	if e.MissingKeys == nil {
		e.MissingKeys = []string{}
	}
}

var (
	headingRe = regexp.MustCompile(`^(#{1,6})\s+(.+?)\s*#*\s*$`)
	bulletRe  = regexp.MustCompile(`^\s*(?:[-*+・]|\d+[.)．]|[（(]\d+[)）]|[①-⑳])\s*(.+)$`)
)

// keyWords maps words of a heading or line to an eligibility key.
var keyWords = []struct{ key, words string }{
	{"target_business", "対象事業|補助対象事業|事業内容"},
	{"company_size", "中小企業|小規模|従業員|資本金"},
	{"region", "所在|地域|都道府県|市内|県内"},
	{"industry", "業種|産業"},
	{"application_period", "期間|締切|期限|公募期間|申請期間"},
	{"subsidy_amount", "補助額|補助金額|上限|補助率"},
	{"eligible_expenses", "対象経費|補助対象経費|経費"},
}

func keyOf(text string) string {
	for _, kw := range keyWords {
		for _, w := range strings.Split(kw.words, "|") {
			if strings.Contains(text, w) {
				return kw.key
			}
		}
	}
	return "other"
}

// HeadingExtract is fallback level 2: sections whose heading speaks of requirements give their
// bullet points as need_check (exclusions as must_not); nothing is claimed as must, since no model
// read the details.
func HeadingExtract(md string) Eligibility {
	var e Eligibility
	section := ""
	found := map[string]bool{}
	for _, line := range strings.Split(md, "\n") {
		if m := headingRe.FindStringSubmatch(line); m != nil {
			section = m[2]
			continue
		}
		m := bulletRe.FindStringSubmatch(line)
		if m == nil || section == "" {
			continue
		}
		text := strings.TrimSpace(m[1])
		if text == "" {
			continue
		}
		key := keyOf(section + " " + text)
		it := Item{Key: key, Text: text, Source: section}
		switch {
		case strings.Contains(section, "対象外") || strings.Contains(section, "除外") || strings.Contains(section, "できない"):
			e.MustNot = append(e.MustNot, it)
		case strings.Contains(section, "要件") || strings.Contains(section, "対象") || strings.Contains(section, "資格") || strings.Contains(section, "条件"):
			e.NeedCheck = append(e.NeedCheck, it)
		default:
			continue
		}
		found[key] = true
	}
	for _, k := range EligibilityKeys {
		if !found[k] {
			e.MissingKeys = append(e.MissingKeys, k)
		}
	}
	normalize(&e)
	return e
}

// MinimalEligibility is fallback level 3: every key is missing and the whole document needs
// checking by a person.
func MinimalEligibility(md string) Eligibility {
	e := Eligibility{MissingKeys: append([]string(nil), EligibilityKeys...),
		NeedCheck: []Item{{Key: "document", Text: "要件を自動抽出できませんでした。公募要領を直接確認してください。"}}}
	normalize(&e)
	return e
}
