package flinkapplication

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaler"
	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaling"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// The job autoscaler in a Running application's pass (docs/autoscaler.md): every sampleInterval
// it reads the running job's vertex metrics, evaluates them (package autoscaler), and shows the
// decision in status.autoscaler, with a ScalingReport Event carrying each vertex's rates, when the
// decision changed. The rates change at every sample; status only with what was decided, so an
// autoscaled job that needs nothing costs no status writes. Mode Apply carries a decision through
// in place (autoscaler_apply.go).

// autoscale samples and evaluates the live job when a sample is due, and in mode Apply carries a
// decision through (autoscaler_apply.go); busy is set while it does, or while a sample is read
// over several passes (autoscaling/sampling.go), with what the phase does.
func autoscale(rc *Context) (out Outcome, busy bool) {
	spec := rc.App.Spec.Autoscaler
	st := &rc.App.Status
	if spec == nil || spec.Mode == "" || spec.Mode == v1beta1.AutoscalerOff {
		if st.Autoscaler != nil {
			st.Autoscaler = nil
			rc.env.scaling.Forget(rc.Key())
		}
		return Outcome{}, false
	}
	hash, jobID := jobstate.LiveJob(&st.JobOwnerStatus)
	if jobID == "" {
		return Outcome{}, false
	}
	cfg, err := autoscaling.Config(spec, rc.Config.Autoscaler, rc.ReadinessTimeout())
	if err != nil {
		showAutoscaler(rc, autoscaler.Decision{Reason: err.Error()})
		return Outcome{}, false
	}
	if st.Autoscaler != nil && st.Autoscaler.Target != nil {
		// Carried through whatever the mode says now: a target half applied is finished, or taken back.
		return applyScaling(rc, cfg), true
	}
	v := rc.Flink().View(hash, jobID)
	if v.Details == nil {
		return Outcome{}, false
	}
	vertices, over := autoscaling.TrackedVertices(v.Details)
	if over != "" {
		stopAutoscaling(rc, over)
		return Outcome{}, false
	}
	mem := rc.env.scaling.Of(rc.Key(), jobID)
	interval := autoscaling.SampleSpacing(rc.Config.Autoscaler.SampleInterval.Duration, cfg.MetricsWindow, len(vertices))
	if r := mem.Reading; r != nil && rc.Now.Sub(r.Time) >= interval {
		mem.Reading = nil // not read within a sample interval: a gap in the window
	}
	if mem.Reading == nil && !mem.Last.IsZero() && rc.Now.Sub(mem.Last) < interval {
		return Outcome{}, false
	}
	state := jobState(rc, v.Details)
	if !state.Restarting && !state.Failed {
		sample, done, err := mem.ReadSample(rc, rc.Flink().Flink(), v.Ref, vertices, rc.Now, autoscaling.NewCallBudget(rc.env.Clock))
		switch {
		case err != nil:
			// A gap in the samples holds decisions until the window is whole again.
			mem.Last = rc.Now
			return Outcome{}, false
		case !done:
			// The rest of the sample in a pass of its own: this one has spent its budget.
			return stay(autoscaling.ResumeSampling), true
		}
		mem.Add(sample, cfg.MetricsWindow+cfg.StabilizationInterval, autoscaling.SamplesKept(len(vertices)))
	} else {
		mem.Last, mem.Reading = rc.Now, nil
	}
	d := autoscaler.Evaluate(rc.Now, cfg, vertices, mem.Samples, state, autoscaling.History(st.Autoscaler, mem.Load))
	mem.Load = d.History.Load
	if d.Apply {
		inPlace := cannotApplyInPlace(rc)
		if inPlace == "" {
			return startScaling(rc, d, false, false), true
		}
		if cannotApplyByRestart(rc) == "" {
			return startScaling(rc, d, false, true), true
		}
		d.Apply = false
		d.Reason = inPlace + "; recommends instead: " + d.Reason
	}
	showAutoscaler(rc, d)
	return Outcome{}, false
}

// stopAutoscaling shows in status.autoscaler why the autoscaler decides nothing for the job, with a
// Warning Event when that is news, and forgets what it kept of the job. What it put in force, and
// its history, stay.
func stopAutoscaling(rc *Context, why string) {
	rc.env.scaling.Forget(rc.Key())
	st := &v1beta1.AutoscalerStatus{}
	if prev := rc.App.Status.Autoscaler; prev != nil {
		st = prev.DeepCopy()
		st.Vertices = nil
	}
	st.Reason = why
	if apiequality.Semantic.DeepEqual(st, rc.App.Status.Autoscaler) {
		return
	}
	rc.App.Status.Autoscaler = st
	rc.Event(true, "AutoscalerStopped", why)
}

// showAutoscaler writes the decision to status.autoscaler when it differs from what status shows,
// with a ScalingReport Event of the rates behind it.
func showAutoscaler(rc *Context, d autoscaler.Decision) {
	st := autoscaling.Status(d)
	st.Reason = decisionSummary(d)
	for i := range st.Vertices {
		st.Vertices[i].Reason = "" // with the rates of the moment: in the Event
	}
	if prev := rc.App.Status.Autoscaler; prev != nil {
		st.Applied = prev.Applied
	}
	if apiequality.Semantic.DeepEqual(st, rc.App.Status.Autoscaler) {
		return
	}
	rc.App.Status.Autoscaler = st
	msg := st.Reason
	if lines := vertexLines(d); lines != "" {
		msg += "; " + lines
	}
	rc.Event(false, "ScalingReport", msg)
}
