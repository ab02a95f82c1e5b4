package aijob

import (
	"context"
	"fmt"
	"time"
)

// AlertWindow and AlertRate are seed 001's alert rule: a failure rate above 10 % of the AI calls
// in any 5-minute window raises an alert.
const (
	AlertWindow = 5 * time.Minute
	AlertRate   = 0.10
)

// FailureRate returns the failed and total AI calls of the window ending at end.
func (s *Service) FailureRate(ctx context.Context, end time.Time, window time.Duration) (failed, total int, err error) {
	if s.Usage == nil {
		return 0, 0, nil
	}
	return s.Usage.CallOutcomes(ctx, end.Add(-window), end)
}

// ShouldAlert is the rule itself: more than rate of total failed.
func ShouldAlert(failed, total int, rate float64) bool {
	return total > 0 && float64(failed) > rate*float64(total)
}

// CheckAlert raises a local notification (level "alert") when the last AlertWindow's failure
// rate exceeds AlertRate, at most once per window. It reports whether it raised one.
func (s *Service) CheckAlert(ctx context.Context) (bool, error) {
	now := s.now()
	failed, total, err := s.FailureRate(ctx, now, AlertWindow)
	if err != nil || !ShouldAlert(failed, total, AlertRate) {
		return false, err
	}
	if recent, err := s.Notifier.AlertsSince(ctx, now.Add(-AlertWindow)); err != nil || recent > 0 {
		return false, err
	}
	s.notify(ctx, 0, "alert", "AI の失敗率が上がっています",
		fmt.Sprintf("直近5分間の AI 呼び出し %d 件のうち %d 件（%.0f%%）が失敗しました。", total, failed, 100*float64(failed)/float64(total)))
	return true, nil
}
