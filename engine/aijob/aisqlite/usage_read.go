package aisqlite

import (
	"context"
	"time"
)

// UsageTotals are the model calls since some time: seed 003's llm_tokens_total and
// llm_cost_usd_total, for the metrics view.
type UsageTotals struct {
	Calls            int
	PromptTokens     int64
	CompletionTokens int64
	CostUSD          float64
}

// UsageSince adds up llm_usage since since.
func (st *Store) UsageSince(ctx context.Context, since time.Time) (UsageTotals, error) {
	var u UsageTotals
	err := st.db.R.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(prompt_tokens), 0),
		coalesce(sum(completion_tokens), 0), coalesce(sum(cost_usd), 0) FROM llm_usage WHERE created_at >= ?`,
		since.UnixMilli()).Scan(&u.Calls, &u.PromptTokens, &u.CompletionTokens, &u.CostUSD)
	return u, err
}
