package app

import (
	"context"
	"fmt"
	"time"

	"jobdesk/app/aifamily"
	"jobdesk/engine/aijob/aisqlite"
	"jobdesk/engine/job"
	"jobdesk/engine/queue"
)

// This file serves the window's metrics view: the queue's figures (seed 000: started,
// completed, failed and timed-out jobs, processing time, queue depth), the AI usage (seed 003:
// tokens and cost), and the specifications' alert rules evaluated over the last five minutes.

// AlertWindow is the span the alert rules look back over (seed 000: 5 minutes).
const AlertWindow = 5 * time.Minute

// Alert rules (seed 000's アラート設定 and seed 001's workflow rule).
const (
	AlertErrorRate        = "error_rate"         // > 5 % of the jobs that ended failed
	AlertTimeoutRate      = "timeout_rate"       // > 10 % timed out
	AlertAvgDuration      = "avg_duration"       // mean processing time > 5 minutes
	AlertQueueDepth       = "queue_depth"        // > 100 jobs waiting
	AlertWorkflowFailRate = "workflow_fail_rate" // > 10 % of workflow executions failed
)

// Alert is one rule that holds now.
type Alert struct {
	Rule      string  // one of the Alert* names
	Value     float64 // the measured value (a percentage, minutes or a count)
	Threshold float64 // the rule's limit, in the same unit
	Message   string  // for people, English
	MessageJa string  // for people, Japanese
}

// MetricsReport is the metrics view's data.
type MetricsReport struct {
	queue.Metrics
	AI     aisqlite.UsageTotals
	Alerts []Alert
}

// Metrics reads the figures since since and evaluates the alert rules.
func (a *App) Metrics(ctx context.Context, since time.Time) (MetricsReport, error) {
	m, err := a.queue.ReadMetrics(ctx, since, AlertWindow)
	if err != nil {
		return MetricsReport{}, job.Wrap(job.E009, err, "the metrics could not be read").WithJa("メトリクスを読み取れませんでした。")
	}
	r := MetricsReport{Metrics: m}
	if ai, ok := FamilyOf[*aifamily.Family](a); ok {
		if r.AI, err = ai.UsageSince(ctx, since); err != nil {
			return r, job.Wrap(job.E009, err, "the AI usage could not be read").WithJa("AI の使用量を読み取れませんでした。")
		}
	}
	r.Alerts = Alerts(m)
	return r, nil
}

// Alerts evaluates the alert rules on m.
func Alerts(m queue.Metrics) []Alert {
	var out []Alert
	pct := func(n, of int) float64 { return 100 * float64(n) / float64(of) }
	w := m.Window
	if w.Ended > 0 {
		if v := pct(w.Failed, w.Ended); v > 5 {
			out = append(out, Alert{AlertErrorRate, v, 5,
				fmt.Sprintf("Error rate %.0f %% in the last 5 minutes (over 5 %%)", v),
				fmt.Sprintf("直近5分のエラー率が %.0f %% です（5 %% 超）", v)})
		}
		if v := pct(w.TimedOut, w.Ended); v > 10 {
			out = append(out, Alert{AlertTimeoutRate, v, 10,
				fmt.Sprintf("Timeout rate %.0f %% in the last 5 minutes (over 10 %%)", v),
				fmt.Sprintf("直近5分のタイムアウト率が %.0f %% です（10 %% 超）", v)})
		}
		if v := w.AvgDuration.Minutes(); v > 5 {
			out = append(out, Alert{AlertAvgDuration, v, 5,
				fmt.Sprintf("Jobs took %.1f minutes on average in the last 5 minutes (over 5)", v),
				fmt.Sprintf("直近5分の平均処理時間が %.1f 分です（5 分超）", v)})
		}
	}
	if m.QueueDepth > 100 {
		out = append(out, Alert{AlertQueueDepth, float64(m.QueueDepth), 100,
			fmt.Sprintf("%d jobs are waiting (over 100)", m.QueueDepth),
			fmt.Sprintf("待機中のジョブが %d 件あります（100 件超）", m.QueueDepth)})
	}
	if w.WorkflowsEnded > 0 {
		if v := pct(w.WorkflowsFailed, w.WorkflowsEnded); v > 10 {
			out = append(out, Alert{AlertWorkflowFailRate, v, 10,
				fmt.Sprintf("Workflow failure rate %.0f %% in the last 5 minutes (over 10 %%)", v),
				fmt.Sprintf("直近5分のワークフロー失敗率が %.0f %% です（10 %% 超）", v)})
		}
	}
	return out
}
