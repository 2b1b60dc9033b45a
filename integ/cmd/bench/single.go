package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// transition is one application's way from a spec change (or its creation) to Running.
type transition struct {
	Seconds float64 `json:"seconds"`
	// Phases is the time spent in each phase, as the watch saw the phases change.
	Phases []phaseSplit `json:"phases"`
	// History is status.history over the same span, as the API server stores it (whole seconds).
	History []string `json:"history"`
	// Simulator is the simulator's own configured durations on the way: the operator cannot be
	// faster than these.
	Simulator        map[string]float64 `json:"simulator"`
	SimulatorSeconds float64            `json:"simulatorSeconds"`
	// SimulatorObserved is what the simulator's timeline recorded for the same steps; a job start
	// longer than configured waited for its TaskManagers.
	SimulatorObserved map[string]float64 `json:"simulatorObserved"`
	// StabilizationSeconds is jobStabilizationPeriod: the operator waits it out on purpose.
	StabilizationSeconds float64 `json:"stabilizationSeconds"`
	// OverheadSeconds is the rest: Seconds − Simulator − Stabilization. It holds the operator's own
	// work and the Kubernetes time to start the cluster's pods.
	OverheadSeconds float64 `json:"overheadSeconds"`
}

type phaseSplit struct {
	Phase   string  `json:"phase"`
	Seconds float64 `json:"seconds"`
}

type singleResult struct {
	Create                 transition   `json:"create"`
	Updates                []transition `json:"updates"`
	UpdateMedianSeconds    float64      `json:"updateMedianSeconds"`
	UpdateOverheadMedian   float64      `json:"updateOverheadMedianSeconds"`
	StabilizationSeconds   float64      `json:"stabilizationSeconds"`
	UpdateSimulatorSeconds float64      `json:"updateSimulatorSeconds"`
}

const singleName = "single"

// single creates one application, waits until it runs, then changes its parallelism `updates`
// times (3 ↔ 4: a Dual update through a savepoint each time) and waits for each to run.
func (b *bench) single(ctx context.Context, updates int) (*singleResult, error) {
	ns, err := b.namespace(ctx, "bench-single")
	if err != nil {
		return nil, err
	}
	key := ns + "/" + singleName
	timings := flinksim.Timings{}.Effective()
	jobStart := map[string]float64{
		"initialize": timings.Initialize.Seconds(),
		"schedule":   timings.Schedule.Seconds(),
	}
	res := &singleResult{StabilizationSeconds: b.stabilization.Seconds()}

	// The API server's first FlinkApplication create takes seconds of its own (once per process);
	// a dry run pays for it without the operator seeing anything.
	warmUp := time.Now()
	if _, err := b.apps.FlinkV1beta1().FlinkApplications(ns).Create(ctx, benchApp(ns, singleName, 3, ""),
		metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		return nil, err
	}
	b.logf("(a) API server warmed up: the first create (a dry run) took %.2fs", time.Since(warmUp).Seconds())
	began := time.Now()
	if _, err := b.apps.FlinkV1beta1().FlinkApplications(ns).Create(ctx, benchApp(ns, singleName, 3, ""), metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	if res.Create, err = b.waitTransition(ctx, key, began, "", jobStart); err != nil {
		return nil, err
	}
	b.logf("(a) create → Running in %.2fs (overhead %.2fs)", res.Create.Seconds, res.Create.OverheadSeconds)

	updateSim := map[string]float64{"savepoint": timings.Savepoint.Seconds(), "cancel": timings.Cancel.Seconds()}
	for k, v := range jobStart {
		updateSim[k] = v
	}
	for i := range updates {
		oldHash := b.rec.latest(key).Status.DeployHash
		began := time.Now()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			app, err := b.apps.FlinkV1beta1().FlinkApplications(ns).Get(ctx, singleName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			app.Spec.Parallelism = 3 + int32((i+1)%2)
			_, err = b.apps.FlinkV1beta1().FlinkApplications(ns).Update(ctx, app, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("update %d: %w", i+1, err)
		}
		tr, err := b.waitTransition(ctx, key, began, oldHash, updateSim)
		if err != nil {
			return nil, fmt.Errorf("update %d: %w", i+1, err)
		}
		b.logf("(a) update %d → Running in %.2fs (overhead %.2fs)", i+1, tr.Seconds, tr.OverheadSeconds)
		res.Updates = append(res.Updates, tr)
	}
	var totals, overheads []float64
	for _, u := range res.Updates {
		totals = append(totals, u.Seconds)
		overheads = append(overheads, u.OverheadSeconds)
		res.UpdateSimulatorSeconds = u.SimulatorSeconds
	}
	res.UpdateMedianSeconds, res.UpdateOverheadMedian = median(totals), median(overheads)
	// Out of the way of the fleet measurements: neither its writes nor its REST calls may count there.
	return res, b.deleteNamespaces(ctx, []string{ns})
}

// waitTransition waits until the application runs on a cluster other than oldHash and splits the
// time since began.
func (b *bench) waitTransition(ctx context.Context, key string, began time.Time, oldHash string, sim map[string]float64) (transition, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	var ended time.Time
	err := waitFor(ctx, key+" Running", func() bool {
		at, ok := b.rec.runningSince(key, began, oldHash)
		ended = at
		if !ok {
			if app := b.rec.latest(key); app != nil && app.Status.Phase == v1beta1.PhaseDeployFailed {
				cancel()
			}
		}
		return ok
	})
	if err != nil {
		if app := b.rec.latest(key); app != nil {
			err = fmt.Errorf("%w (phase %s: %s)", err, app.Status.Phase, app.Status.Reason)
		}
		return transition{}, err
	}
	tr := transition{
		Seconds:              ended.Sub(began).Seconds(),
		Simulator:            sim,
		StabilizationSeconds: b.stabilization.Seconds(),
		SimulatorObserved:    b.simulatorObserved(key, began, ended),
	}
	for _, v := range sim {
		tr.SimulatorSeconds += v
	}
	tr.OverheadSeconds = tr.Seconds - tr.SimulatorSeconds - tr.StabilizationSeconds
	phases := b.rec.phasesBetween(key, began, ended)
	if len(phases) == 0 || phases[0].at.After(began) {
		// A new application: the time until the watch first saw it counts too.
		phases = append([]phaseAt{{"(not created yet)", began}}, phases...)
	}
	for i := 0; i+1 < len(phases); i++ {
		name := string(phases[i].phase)
		if name == "" {
			name = "(no status yet)"
		}
		tr.Phases = append(tr.Phases, phaseSplit{name, phases[i+1].at.Sub(phases[i].at).Seconds()})
	}
	if app := b.rec.latest(key); app != nil {
		// Whole seconds, so a transition in the same second as began still belongs to this span.
		from := began.Truncate(time.Second)
		for _, h := range app.Status.History {
			if !h.Time.Time.Before(from) {
				tr.History = append(tr.History, fmt.Sprintf("%s %s→%s %s", h.Time.Format("15:04:05"), h.From, h.To, h.Reason))
			}
		}
	}
	return tr, nil
}

// simulatorObserved reads the simulator's timeline: how long the job that ended in the span took
// from savepoint completion (CANCELLING) to CANCELED, and the new job from submission to RUNNING.
func (b *bench) simulatorObserved(key string, from, to time.Time) map[string]float64 {
	out := map[string]float64{}
	for _, job := range b.env.Fleet.Timeline().Jobs(key) {
		var cancelling, initializing time.Time
		for _, s := range job.States {
			if s.Time.Before(from) || s.Time.After(to) {
				continue
			}
			switch s.State {
			case "CANCELLING":
				cancelling = s.Time
			case "CANCELED":
				if !cancelling.IsZero() {
					out["cancel"] = s.Time.Sub(cancelling).Seconds()
				}
			case "INITIALIZING":
				initializing = s.Time
			case "RUNNING":
				if !initializing.IsZero() {
					out["jobStart"] = s.Time.Sub(initializing).Seconds()
				}
			}
		}
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
