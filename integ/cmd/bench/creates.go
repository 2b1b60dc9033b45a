package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// createProbe is (c)'s last figure: applications created one at a time while the fleet polls, and
// how long each waited for the operator's first write to it (its finalizer). At 10,000 applications
// the polls of jobs at rest can keep every worker busy; a create queued behind them waits as long
// as the queue is behind, which is what the Apache operator's users report at that size
// (java-operator-sdk#2293, issue 29). The operator queues what an event asks for ahead of the polls.
type createProbe struct {
	Creates int `json:"creates"`
	// FirstWriteMs are each create's times from the API server's answer to the watch seeing the
	// operator's first write, in the order they were made.
	FirstWriteMs []float64 `json:"firstWriteMs"`
	P50Ms        float64   `json:"p50Ms"`
	MaxMs        float64   `json:"maxMs"`
}

// createProbeGap spaces the creates, so that each finds the queue as the fleet keeps it, not
// behind the one before.
const createProbeGap = 3 * time.Second

// probeCreates creates k applications in a namespace of their own, one every createProbeGap, times
// each one's first write by the operator, and deletes them.
func (b *bench) probeCreates(ctx context.Context, k int) (*createProbe, error) {
	ns, err := b.namespace(ctx, "bench-creates")
	if err != nil {
		return nil, err
	}
	b.logf("(c) creating %d applications one every %s while the fleet polls", k, createProbeGap)
	res := &createProbe{Creates: k}
	var keys []string
	for i := range k {
		name := fmt.Sprintf("created-%d", i)
		app := benchApp(ns, name, 1, "")
		if _, err := b.apps.FlinkV1beta1().FlinkApplications(ns).Create(ctx, app, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("creating %s/%s: %w", ns, name, err)
		}
		created := time.Now()
		key := ns + "/" + name
		keys = append(keys, key)
		wctx, cancel := context.WithTimeout(ctx, b.timeout)
		err := waitForEvery(wctx, "the operator's first write to "+key, 5*time.Millisecond, func() bool {
			a := b.rec.latest(key)
			return a != nil && (len(a.Finalizers) > 0 || a.Status.Phase != "")
		})
		cancel()
		if err != nil {
			return nil, err
		}
		res.FirstWriteMs = append(res.FirstWriteMs, float64(time.Since(created).Microseconds())/1000)
		if err := sleep(ctx, createProbeGap); err != nil {
			return nil, err
		}
	}
	sorted := append([]float64(nil), res.FirstWriteMs...)
	sort.Float64s(sorted)
	res.P50Ms, res.MaxMs = sorted[len(sorted)/2], sorted[len(sorted)-1]
	b.logf("(c) the operator's first write to a created application came after p50 %.0f ms, at most %.0f ms (%v)",
		res.P50Ms, res.MaxMs, res.FirstWriteMs)
	return res, b.deleteFleet(ctx, keys)
}
