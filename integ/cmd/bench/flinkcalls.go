package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// flinkCalls is how the operator's Flink REST calls fared during a run, by operation, from its
// flinkfsm_flink_request_* metrics: every client's calls, to ordinary and hostile JobManagers
// alike. Beside hostile tenants they show where the operator's time went: calls that waited out
// their timeout, answers refused, answers left unread for want of room in the answer budget.
type flinkCalls struct {
	Calls map[string]requestTimes `json:"calls"`
	// Errors counts failed calls by "operation reason" (an HTTP status, timeout, transport,
	// decode or invalid).
	Errors map[string]float64 `json:"errors,omitempty"`
}

// flinkCallTotals are the counters behind flinkCalls at one moment.
type flinkCallTotals struct {
	calls  map[string]struct{ count, sum float64 }
	errors map[string]float64
}

func (b *bench) flinkCallTotals(ctx context.Context) (flinkCallTotals, error) {
	families, err := b.scrape(ctx)
	if err != nil {
		return flinkCallTotals{}, err
	}
	return parseFlinkCalls(families), nil
}

func parseFlinkCalls(families map[string]*dto.MetricFamily) flinkCallTotals {
	t := flinkCallTotals{calls: map[string]struct{ count, sum float64 }{}, errors: map[string]float64{}}
	label := func(m *dto.Metric, name string) string {
		for _, l := range m.GetLabel() {
			if l.GetName() == name {
				return l.GetValue()
			}
		}
		return ""
	}
	if f := families["flinkfsm_flink_request_duration_seconds"]; f != nil {
		for _, m := range f.GetMetric() {
			t.calls[label(m, "operation")] = struct{ count, sum float64 }{float64(m.GetHistogram().GetSampleCount()), m.GetHistogram().GetSampleSum()}
		}
	}
	if f := families["flinkfsm_flink_request_errors_total"]; f != nil {
		for _, m := range f.GetMetric() {
			t.errors[label(m, "operation")+" "+label(m, "reason")] = m.GetCounter().GetValue()
		}
	}
	return t
}

// since is what happened between an earlier scrape and this one.
func (t flinkCallTotals) since(before flinkCallTotals) flinkCalls {
	out := flinkCalls{Calls: map[string]requestTimes{}, Errors: map[string]float64{}}
	for op, now := range t.calls {
		was := before.calls[op]
		if n := now.count - was.count; n > 0 {
			out.Calls[op] = requestTimes{Count: n, MeanSeconds: (now.sum - was.sum) / n}
		}
	}
	for k, now := range t.errors {
		if n := now - before.errors[k]; n > 0 {
			out.Errors[k] = n
		}
	}
	return out
}

// describe lists the calls busiest first, "GetJob 120 × 35 ms", then the errors.
func (c flinkCalls) describe() string {
	if len(c.Calls) == 0 {
		return "none recorded"
	}
	ops := make([]string, 0, len(c.Calls))
	for op := range c.Calls {
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool {
		if c.Calls[ops[i]].Count != c.Calls[ops[j]].Count {
			return c.Calls[ops[i]].Count > c.Calls[ops[j]].Count
		}
		return ops[i] < ops[j]
	})
	parts := make([]string, 0, len(ops))
	for _, op := range ops {
		parts = append(parts, fmt.Sprintf("%s %.0f × %.0f ms", op, c.Calls[op].Count, 1000*c.Calls[op].MeanSeconds))
	}
	s := strings.Join(parts, ", ")
	if len(c.Errors) > 0 {
		errs := make(map[string]int64, len(c.Errors))
		for k, n := range c.Errors {
			errs[k] = int64(n)
		}
		s += "; failed: " + formatCounts(errs)
	}
	return s
}
