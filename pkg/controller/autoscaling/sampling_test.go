package autoscaling

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	testclock "k8s.io/utils/clock/testing"
)

// A call that hangs ends when the pass's budget does, on the operator's clock, and stops the sample
// where it is rather than failing it.
func TestAMetricsCallEndsWithThePassesBudget(t *testing.T) {
	clk := testclock.NewFakeClock(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	b := NewCallBudget(clk)
	clk.Step(SamplingBudget - 50*time.Millisecond)
	start := time.Now()
	err := b.call(context.Background(), func(ctx context.Context) error {
		<-ctx.Done() // a JobManager that never answers
		return ctx.Err()
	})
	assert.ErrorIs(t, err, errBudgetSpent)
	assert.Less(t, time.Since(start), SamplingBudget, "the call ended with what was left of the budget")
	clk.Step(time.Second)
	assert.ErrorIs(t, b.call(context.Background(), func(context.Context) error { t.Fatal("called"); return nil }), errBudgetSpent)

	b = NewCallBudget(clk)
	for range MaxSamplingCalls {
		require.NoError(t, b.call(context.Background(), func(context.Context) error { return nil }))
	}
	assert.ErrorIs(t, b.call(context.Background(), func(context.Context) error { return nil }), errBudgetSpent)
	failed := errors.New("HTTP 500")
	b = NewCallBudget(clk)
	assert.Equal(t, failed, b.call(context.Background(), func(context.Context) error { return failed }), "the JobManager's own error")
}
