package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// requestTimes is how the operator's requests of one verb and resource fared during a run, from
// its flinkfsm_kube_request_* histograms: how many, their mean latency, and the mean wait for the
// client's own rate limit before each.
type requestTimes struct {
	Count         float64 `json:"count"`
	MeanSeconds   float64 `json:"meanSeconds"`
	MeanThrottled float64 `json:"meanThrottledSeconds"`
}

// kubeRequestTotals are the counts and sums of the operator's request histograms, by "VERB resource",
// and of its workqueue's under the keys "(passes)" (work) and "(queued)" (waiting for a worker).
type kubeRequestTotals map[string]struct{ count, sum, throttled float64 }

const passesKey, queuedKey = "(passes)", "(queued)"

func (b *bench) kubeRequestTotals(ctx context.Context) (kubeRequestTotals, error) {
	families, err := b.scrape(ctx)
	if err != nil {
		return nil, err
	}
	out := kubeRequestTotals{}
	for name, key := range map[string]string{"flinkfsm_workqueue_work_duration_seconds": passesKey, "flinkfsm_workqueue_queue_duration_seconds": queuedKey} {
		if f := families[name]; f != nil {
			t := out[key]
			for _, m := range f.GetMetric() {
				t.count += float64(m.GetHistogram().GetSampleCount())
				t.sum += m.GetHistogram().GetSampleSum()
			}
			out[key] = t
		}
	}
	for name, throttled := range map[string]bool{"flinkfsm_kube_request_duration_seconds": false, "flinkfsm_kube_request_throttled_seconds": true} {
		f := families[name]
		if f == nil {
			return nil, fmt.Errorf("the operator's /metrics has no %s", name)
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			key := labels["verb"] + " " + labels["resource"]
			t := out[key]
			if throttled {
				t.throttled = m.GetHistogram().GetSampleSum()
			} else {
				t.count, t.sum = float64(m.GetHistogram().GetSampleCount()), m.GetHistogram().GetSampleSum()
			}
			out[key] = t
		}
	}
	return out, nil
}

// since is what happened between an earlier scrape and this one.
func (t kubeRequestTotals) since(before kubeRequestTotals) map[string]requestTimes {
	out := map[string]requestTimes{}
	for k, now := range t {
		was := before[k]
		n := now.count - was.count
		if n <= 0 {
			continue
		}
		out[k] = requestTimes{Count: n, MeanSeconds: (now.sum - was.sum) / n, MeanThrottled: (now.throttled - was.throttled) / n}
	}
	return out
}

// describeRequestTimes lists the busiest first: "POST deployments 200 × 85 ms (throttled 3 ms)".
func describeRequestTimes(times map[string]requestTimes) string {
	keys := make([]string, 0, len(times))
	for k := range times {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if times[keys[i]].Count != times[keys[j]].Count {
			return times[keys[i]].Count > times[keys[j]].Count
		}
		return keys[i] < keys[j]
	})
	var parts []string
	for _, k := range keys {
		t := times[k]
		if k == passesKey || k == queuedKey {
			parts = append(parts, fmt.Sprintf("%s %.0f × %.0f ms", k, t.Count, 1000*t.MeanSeconds))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.0f × %.0f ms (throttled %.0f ms)", k, t.Count, 1000*t.MeanSeconds, 1000*t.MeanThrottled))
	}
	return strings.Join(parts, ", ")
}
