package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// pair is one floor run and the operator's run right after it.
type pair struct {
	FloorSeconds    float64 `json:"floorSeconds"`
	OperatorSeconds float64 `json:"operatorSeconds"`
	Ratio           float64 `json:"ratio"`
	// RatioWithoutStabilization leaves jobStabilizationPeriod out of the operator's time, as the
	// update target does: the floor waits for nothing of the kind.
	RatioWithoutStabilization float64 `json:"ratioWithoutStabilization"`
	// Kept is the pair whose figures (b) reports: the one with the median ratio without
	// stabilization.
	Kept bool `json:"kept,omitempty"`
}

// defaultPairs is how many floor and operator runs (b) alternates. On 2 cores one pair does not
// repeat: over a day of runs of one build the floor alone moved from 6.4 to 10 s, and the ratio from
// 1.45× to 2.34×, so at the sizes that take seconds (b) runs three pairs and keeps the median; at 1,000
// applications one pair takes over five minutes and moves less.
func defaultPairs(n int) int {
	if n <= 200 {
		return 3
	}
	return 1
}

// scale is (b): the floor and the operator's run, alternated pairs times. It reports the pair whose
// ratio without jobStabilizationPeriod is the median, every figure of (b) from that pair, and every pair's ratio beside it. The
// last pair's applications stay for (c). With a taken floor (-floor-from, one pair) it measures
// only the operator's run, against that floor; with noFloor (one pair) only the operator's run,
// against none.
func (b *bench) scale(ctx context.Context, n, pairs int, taken *takenFloor, noFloor bool) (*scaleResult, []string, error) {
	var runs []*scaleResult
	var keys []string
	for i := range pairs {
		var floor floorRun
		if noFloor {
			b.logf("(b) floor not measured (-no-floor): the ratio is not judged")
		} else if taken != nil {
			floor = taken.run
			b.logf("(b) floor not measured: %.2fs taken from %s (measured %s at %s)",
				floor.seconds, taken.source.Path, taken.source.Date, taken.source.Commit)
		} else {
			var err error
			if floor, err = b.floor(ctx, n); err != nil {
				return nil, nil, fmt.Errorf("floor: %w", err)
			}
		}
		res, k, err := b.fleet(ctx, "bench-apps", n)
		if err != nil {
			return nil, nil, err
		}
		if taken != nil {
			source := taken.source
			res.FloorFrom = &source
		}
		res.FloorSeconds, res.FloorAppliedSeconds = floor.seconds, floor.applied
		res.FloorRequests, res.FloorCPU, res.FloorProcesses = floor.requests, floor.cpu, floor.processes
		res.NoFloor = noFloor
		if floor.seconds > 0 {
			// Without a floor the ratio stays 0: JSON has no infinity.
			res.Ratio = res.OperatorSeconds / floor.seconds
			res.RatioWithoutStabilization = (res.OperatorSeconds - b.stabilization.Seconds()) / floor.seconds
		}
		runs, keys = append(runs, res), k
		if noFloor {
			// A floor of 0.00s would read as one measured.
			b.logf("(b) operator %.2fs; no floor, no ratio (-no-floor)", res.OperatorSeconds)
			continue
		}
		b.logf("(b) pair %d of %d: operator %.2fs / floor %.2fs = %.2f× (%.2f× without jobStabilizationPeriod)",
			i+1, pairs, res.OperatorSeconds, floor.seconds, res.Ratio, res.RatioWithoutStabilization)
		if i < pairs-1 {
			if err := b.deleteFleet(ctx, k); err != nil {
				return nil, nil, err
			}
		}
	}
	ratios := make([]float64, len(runs))
	for i, r := range runs {
		ratios[i] = r.RatioWithoutStabilization
	}
	median := medianIndex(ratios)
	all := make([]pair, len(runs))
	for i, r := range runs {
		all[i] = pair{FloorSeconds: r.FloorSeconds, OperatorSeconds: r.OperatorSeconds, Ratio: r.Ratio,
			RatioWithoutStabilization: r.RatioWithoutStabilization, Kept: i == median}
	}
	kept := runs[median]
	kept.Pairs = all
	return kept, keys, nil
}

// medianIndex is the index of the median of values (the upper one of an even count); one index
// even when values repeat.
func medianIndex(values []float64) int {
	order := make([]int, len(values))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return values[order[i]] < values[order[j]] })
	return order[len(order)/2]
}

// deleteFleet deletes the operator's run's applications with their namespaces, and waits until the
// watch saw them go, so that the next run's applications, of the same names, start a fresh record.
func (b *bench) deleteFleet(ctx context.Context, keys []string) error {
	nss := namespaces(keys)
	if err := b.deleteNamespaces(ctx, nss); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	return waitFor(wctx, "the watch to see "+strings.Join(nss, ", ")+"'s applications deleted", func() bool {
		for _, k := range keys {
			if b.rec.latest(k) != nil {
				return false
			}
		}
		return true
	})
}

// pairRatios lists every pair's ratio without jobStabilizationPeriod, the kept one marked.
func pairRatios(sc *scaleResult) string {
	ratios, kept := make([]float64, len(sc.Pairs)), 0
	for i, p := range sc.Pairs {
		ratios[i] = p.RatioWithoutStabilization
		if p.Kept {
			kept = i
		}
	}
	return listRatios(ratios, kept)
}

// listRatios lists ratios in the order they were measured, the kept one marked.
func listRatios(ratios []float64, kept int) string {
	s := make([]string, len(ratios))
	for i, r := range ratios {
		s[i] = fmt.Sprintf("%.2f×", r)
		if i == kept {
			s[i] += " (kept)"
		}
	}
	return strings.Join(s, ", ")
}
