package flinksim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestServedTimesAreCumulativeLikeThePrometheusHistogramTheyAreSetBeside(t *testing.T) {
	f := &Fleet{}
	for _, took := range []time.Duration{time.Millisecond, 5 * time.Millisecond, 7 * time.Millisecond, 40 * time.Millisecond, 3 * time.Second} {
		f.served.observe(took)
	}
	got := f.ServedTimes()
	assert.Equal(t, uint64(5), got.Count)
	assert.Equal(t, []uint64{2, 3, 3, 4, 4, 4, 4, 4}, got.Cumulative, "within 5 ms, 10 ms, ... 1 s; the 3 s call only in Count")
}
