package fsm

import (
	"math"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

// Backoff is the delay before retry n: base·2^(n-1), capped.
func Backoff(cfg *config.Config, n int32) time.Duration {
	d := float64(cfg.BaseBackoffDuration.Duration) * math.Pow(2, float64(n-1))
	if max := float64(cfg.MaxBackoffDuration.Duration); d > max {
		d = max
	}
	return time.Duration(d)
}
