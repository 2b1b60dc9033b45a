package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// soakResult is what (e) measured. Times are of the pair with the median ratio; memory, restarts
// and applications left not Running are the worst of every soak run.
type soakResult struct {
	N                int     `json:"n"`
	HostileTenants   int     `json:"hostileTenants"`
	HeadStartSeconds float64 `json:"headStartSeconds"`
	HoldSeconds      float64 `json:"holdSeconds"`
	LargeJarMiB      int64   `json:"largeJarMiB"`

	// BaselineSeconds is from the first create to the last ordinary application Running, with no
	// hostile tenant; SoakSeconds the same beside the hostile tenants; Ratio the second over the
	// first (issue 25's target: ≤ 1.2×).
	BaselineSeconds       float64 `json:"baselineSeconds"`
	SoakSeconds           float64 `json:"soakSeconds"`
	Ratio                 float64 `json:"ratio"`
	BaselineMedianSeconds float64 `json:"baselineMedianRunningSeconds"`
	SoakMedianSeconds     float64 `json:"soakMedianRunningSeconds"`
	// BaselineCPU and SoakCPU are the CPU seconds each process of the machine spent in each run
	// of the kept pair: what the hostile tenants cost the machine beside the operator.
	BaselineCPU map[string]float64 `json:"baselineCPUSeconds"`
	SoakCPU     map[string]float64 `json:"soakCPUSeconds"`
	// BaselinePhases and SoakPhases are when the ordinary applications entered each phase, and
	// BaselineFlinkCalls and SoakFlinkCalls the operator's Flink calls meanwhile: where a slower
	// soak run lost its time.
	BaselinePhases     map[string]spread `json:"baselinePhaseEntered"`
	SoakPhases         map[string]spread `json:"soakPhaseEntered"`
	BaselineFlinkCalls flinkCalls        `json:"baselineFlinkCalls"`
	SoakFlinkCalls     flinkCalls        `json:"soakFlinkCalls"`
	Pairs              []soakPair        `json:"pairs"`

	// PeakRSSMiB is the operator's peak resident memory in the soak runs (issue 25's target:
	// ≤ 256 MiB), BaselinePeakRSSMiB in the baseline runs.
	PeakRSSMiB         float64 `json:"peakRSSMiB"`
	BaselinePeakRSSMiB float64 `json:"baselinePeakRSSMiB"`
	PeakRSSSource      string  `json:"peakRSSSource"`
	// Restarts counts the operator processes that ended on their own (issue 25's target: 0).
	Restarts int            `json:"restarts"`
	Exits    []operatorExit `json:"exits,omitempty"`
	// NotRunningAtEnd counts the ordinary applications not Running when a soak run ended.
	NotRunningAtEnd int `json:"notRunningAtEnd"`
	// TenantsNotDeleted are hostile tenants the operator did not finish deleting between pairs.
	TenantsNotDeleted []string       `json:"tenantsNotDeleted,omitempty"`
	Tenants           []tenantResult `json:"tenants"`
}

// soakPair is one baseline and the soak run after it.
type soakPair struct {
	BaselineSeconds float64 `json:"baselineSeconds"`
	SoakSeconds     float64 `json:"soakSeconds"`
	Ratio           float64 `json:"ratio"`
	Kept            bool    `json:"kept,omitempty"`
}

// soakPairsOf lists every pair's times, marking the one with the median ratio.
func soakPairsOf(runs []soakRun) []soakPair {
	ratios := make([]float64, len(runs))
	for i, r := range runs {
		ratios[i] = r.soak.OperatorSeconds / r.baseline.OperatorSeconds
	}
	kept := medianIndex(ratios)
	out := make([]soakPair, len(runs))
	for i, r := range runs {
		out[i] = soakPair{BaselineSeconds: r.baseline.OperatorSeconds, SoakSeconds: r.soak.OperatorSeconds, Ratio: ratios[i], Kept: i == kept}
	}
	return out
}

// summarizeSoak takes the times of the pair with the median ratio and the worst of every run for
// the rest.
func summarizeSoak(runs []soakRun) *soakResult {
	res := &soakResult{}
	pairs := soakPairsOf(runs)
	for i, r := range runs {
		if pairs[i].Kept {
			res.BaselineSeconds, res.SoakSeconds, res.Ratio = r.baseline.OperatorSeconds, r.soak.OperatorSeconds, pairs[i].Ratio
			res.BaselineMedianSeconds, res.SoakMedianSeconds = r.baseline.MedianRunningSeconds, r.soak.MedianRunningSeconds
			res.BaselineCPU, res.SoakCPU = r.baseline.OperatorCPU, r.soak.OperatorCPU
			res.BaselinePhases, res.SoakPhases = r.baseline.PhaseEntered, r.soak.PhaseEntered
			res.BaselineFlinkCalls, res.SoakFlinkCalls = r.baselineCalls, r.soakCalls
		}
		res.PeakRSSMiB = max(res.PeakRSSMiB, r.soakPeakMiB)
		res.BaselinePeakRSSMiB = max(res.BaselinePeakRSSMiB, r.baselinePeakMiB)
		res.NotRunningAtEnd = max(res.NotRunningAtEnd, r.notRunningAtEnd)
		res.TenantsNotDeleted = append(res.TenantsNotDeleted, r.tenantsRemaining...)
	}
	return res
}

// soakRatioLimit, soakRSSLimitMiB: issue 25's targets for the soak.
const (
	soakRatioLimit  = 1.2
	soakRSSLimitMiB = 256
)

// evaluateSoak is (e)'s figures.
func (r *results) evaluateSoak() {
	s := r.Soak
	r.add(fmt.Sprintf("(e) %d ordinary apps → all Running, alone", s.N),
		fmt.Sprintf("%s (median %s)", secs(s.BaselineSeconds), secs(s.BaselineMedianSeconds)), "—")
	r.add(fmt.Sprintf("(e)   the same beside %d hostile tenants", s.HostileTenants),
		fmt.Sprintf("%s (median %s)", secs(s.SoakSeconds), secs(s.SoakMedianSeconds)), "—")
	r.target("(e) beside hostile tenants / alone", fmt.Sprintf("%.2f×", s.Ratio), fmt.Sprintf("≤ %.1f×", soakRatioLimit),
		s.Ratio > 0 && s.Ratio <= soakRatioLimit)
	if len(s.Pairs) > 1 {
		ratios, kept := make([]float64, len(s.Pairs)), 0
		for i, p := range s.Pairs {
			ratios[i] = p.Ratio
			if p.Kept {
				kept = i
			}
		}
		r.add(fmt.Sprintf("(e)   each of %d pairs, the median kept", len(s.Pairs)), listRatios(ratios, kept), "—")
	}
	r.target("(e) operator peak RSS beside hostile tenants", fmt.Sprintf("%.0f MiB (alone %.0f)", s.PeakRSSMiB, s.BaselinePeakRSSMiB),
		fmt.Sprintf("≤ %d MiB", soakRSSLimitMiB), s.PeakRSSMiB > 0 && s.PeakRSSMiB <= soakRSSLimitMiB)
	r.target("(e) operator restarts", fmt.Sprint(s.Restarts), "0", s.Restarts == 0)
	r.target(fmt.Sprintf("(e) ordinary apps not Running after the %s hold", time.Duration(s.HoldSeconds*float64(time.Second))),
		fmt.Sprint(s.NotRunningAtEnd), "0", s.NotRunningAtEnd == 0)
}

// print lists what the table leaves out: each hostile tenant and what became of it, the machine's
// CPU in both runs, and how each operator process that ended on its own went.
func (s *soakResult) print(w io.Writer) {
	fmt.Fprintf(w, "\n(e) the %d hostile tenants after the soak (started %s ahead; the large jar %d MiB); phase, calls their hostile party served:\n",
		len(s.Tenants), time.Duration(s.HeadStartSeconds*float64(time.Second)), s.LargeJarMiB)
	for _, t := range s.Tenants {
		phase := t.Phase
		if phase == "" {
			phase = "(no status)"
		}
		fmt.Fprintf(w, "  %-18s %-16s %-14s %s\n", t.Name, t.Kind, phase, formatCounts(t.Requests))
		fmt.Fprintf(w, "  %-18s %s\n", "", t.What)
		if t.Error != "" {
			fmt.Fprintf(w, "  %-18s last error: %s\n", "", t.Error)
		}
	}
	if len(s.TenantsNotDeleted) > 0 {
		fmt.Fprintf(w, "(e) not deleted by the operator within %s between pairs (finalizers removed by the bench): %s\n",
			tenantGrace, strings.Join(s.TenantsNotDeleted, ", "))
	}
	fmt.Fprintf(w, "(e) when the ordinary applications entered each phase, median / last (s since the first create):\n  alone:                  %s\n  beside hostile tenants: %s\n",
		formatPhases(s.BaselinePhases), formatPhases(s.SoakPhases))
	fmt.Fprintf(w, "(e) the operator's Flink calls meanwhile, count × mean latency:\n  alone:                  %s\n  beside hostile tenants: %s\n",
		s.BaselineFlinkCalls.describe(), s.SoakFlinkCalls.describe())
	fmt.Fprintf(w, "(e) CPU seconds spent by each process of the machine:\n  alone:                  %s\n  beside hostile tenants: %s\n",
		formatCPU(s.BaselineCPU), formatCPU(s.SoakCPU))
	fmt.Fprintf(w, "(e) peak RSS measured as %s\n", s.PeakRSSSource)
	for i, e := range s.Exits {
		fmt.Fprintf(w, "(e) operator exit %d at %.0f s: %s; its log ended:\n", i+1, e.AtSeconds, e.Status)
		for _, line := range e.LogTail {
			fmt.Fprintf(w, "    %s\n", line)
		}
		if e.Restart != "" {
			fmt.Fprintf(w, "    starting it again failed: %s\n", e.Restart)
		}
	}
}

// formatPhases lists phases in the order the applications entered them.
func formatPhases(phases map[string]spread) string {
	names := make([]string, 0, len(phases))
	for p := range phases {
		names = append(names, p)
	}
	sort.Slice(names, func(i, j int) bool { return phases[names[i]].Median < phases[names[j]].Median })
	parts := make([]string, 0, len(names))
	for _, p := range names {
		parts = append(parts, fmt.Sprintf("%s %.1f / %.1f", p, phases[p].Median, phases[p].Last))
	}
	return strings.Join(parts, ", ")
}

// formatCounts lists counts by key, largest first.
func formatCounts(counts map[string]int64) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
