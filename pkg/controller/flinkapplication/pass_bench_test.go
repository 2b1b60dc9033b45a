package flinkapplication

import (
	"context"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// BenchmarkARunningPass is one steady pass of a Running application that checkpoints every 10 s,
// the pass the operator makes about a thousand times a second at 10,000 applications: what it
// allocates sets how often the collector runs, and so the tail of every pass beside it. The
// world's fake clientset and simulator are in the figures too; compare runs, not absolutes.
//
//	go test ./pkg/controller/flinkapplication/ -run '^$' -bench ARunningPass -benchmem
func BenchmarkARunningPass(b *testing.B) {
	w := newWorld(&testing.T{})
	w.create(checkpointing("bench", "10s"))
	if app := w.runUntilPhase("bench", v1beta1.PhaseRunning); app == nil {
		b.Fatal("not Running")
	}
	for range 40 { // past the first checkpoints and their records
		_, _ = w.reconcile("bench")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w.clock.Step(10 * time.Second) // statusPollInterval's default
		w.flushBook()
		if _, err := w.env.Reconcile(context.Background(), ns, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}
