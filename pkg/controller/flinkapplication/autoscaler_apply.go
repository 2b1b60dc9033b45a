package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaler"
	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaling"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// Applying a decision, in place: the job keeps its id and its state, and the adaptive scheduler
// rescales it to the resource requirements it is given. The target parallelism per vertex is
// written to status.autoscaler.target before the first request for it, so that an operator
// restarted meanwhile carries on with the same target instead of deciding again. Slots come first
// (the adaptive scheduler only grows a job into slots that exist), then each vertex's upper bound;
// the target is done once every vertex runs at it. A job that fails on the way, or does not run at
// the target within readinessTimeout, goes back to the last parallelism that ran stable (the way
// back), and the autoscaler holds off for its cool-down. Without the adaptive scheduler, applying
// restarts the job (autoscaler_restart.go).

// migrateScalingTarget gives a target an older operator recorded, without the spec.parallelism it
// was decided under, that value, before anything reads it: while the spec is still the one the last
// pass saw (the generation observed), the target was decided under today's spec.parallelism; once the
// user changed the spec since, which spec it was decided under is unknown, and the user's change wins.
func migrateScalingTarget(rc *Context) {
	st := rc.App.Status.Autoscaler
	if st == nil || st.Target == nil || st.Target.SpecParallelism != 0 {
		return
	}
	if rc.App.Generation == rc.App.Status.ObservedGeneration {
		st.Target.SpecParallelism = rc.App.Spec.Parallelism
		return
	}
	t := st.Target
	st.Target = nil
	rc.Event(true, "ScalingAbandoned", fmt.Sprintf("the spec changed while the autoscaler applied %s, recorded without the spec it was decided under: the target is given up", describeTarget(t)))
}

// startScaling records the decision's parallelism as the target to apply; the caller persists it
// before anything is sent.
func startScaling(rc *Context, d autoscaler.Decision, wayBack, restart bool) Outcome {
	_, jobID := jobstate.LiveJob(&rc.App.Status.JobOwnerStatus)
	setTarget(rc, d, wayBack, restart, jobID)
	return persistThenContinue()
}

// applyScaling carries the target through, one step per pass.
func applyScaling(rc *Context, cfg autoscaler.Config) Outcome {
	st := rc.App.Status.Autoscaler
	t := st.Target
	if why := targetOutdated(rc, t); why != "" {
		// Decided under another spec: the user's parallelism wins, and nothing of the target is
		// recorded as applied for the spec now.
		st.Target = nil
		rc.Event(true, "ScalingAbandoned", why)
		return stay(0)
	}
	if t.Restart {
		return applyByRestart(rc)
	}
	hash, jobID := jobstate.LiveJob(&rc.App.Status.JobOwnerStatus)
	v := rc.Flink().View(hash, jobID)
	switch {
	case v.Liveness == jobs.Unknown || v.Details == nil:
		return stay(0)
	case reachedTarget(v.Details, t.Parallelism):
		if err := finishScaling(rc, hash, v.Details); err != nil {
			return failed(err)
		}
		return stay(0)
	}
	if v.Details.State == client.JobFailed || v.Liveness == jobs.Stopped {
		// A job that ended cannot be rescaled in place, back or forth, and the way back did not
		// take it (scalingWayBack, earlier in the pass): how it starts again is the phase's to
		// decide (restartFailedJob). The autoscaler holds off.
		st.Target = nil
		hold := toSecond(rc.Now.Add(cfg.CoolDown))
		st.HoldUntil = &hold
		rc.Event(true, "ScalingAbandoned", fmt.Sprintf("job %s is %s after it was rescaled; the autoscaler holds off until %s",
			jobID, v.Details.State, hold.UTC().Format("15:04:05")))
		return stay(0)
	}
	if rc.Now.Sub(t.Time.Time) > cfg.ReadinessTimeout {
		why := fmt.Sprintf("job %s did not run at %s within %s", jobID, describeParallelism(v.Details, t.Parallelism), cfg.ReadinessTimeout)
		if !t.WayBack && cannotApplyInPlace(rc) == "" {
			state := jobState(rc, v.Details)
			// Running short of the target is not running stable: the way back goes to what ran
			// stable before it, as status recorded.
			state.LastRescale, state.Stable = t.Time.Time, autoscaler.StableRun{}
			if d := autoscaler.WayBack(rc.Now, cfg, state, autoscaling.History(st, nil)); d.Apply {
				d.Reason = why
				return startScaling(rc, d, true, false)
			}
		}
		st.Target = nil
		rc.Event(true, "ScalingAbandoned", why+"; the autoscaler leaves the job as it is")
		return stay(0)
	}
	if tms := taskManagersFor(rc, t.Parallelism); rc.Clusters[hash] != nil && replicas(rc.Clusters[hash].TaskManager) < tms {
		if err := rc.ScaleTaskManagers(hash, tms); err != nil {
			return failed(err)
		}
	}
	if err := requestVertexParallelism(rc, hash, jobID, t.Parallelism); err != nil {
		return failed(err)
	}
	return stay(0)
}

// rescalingInPlace tells whether the job is being rescaled in place, by the autoscaler or an
// in-place parallelism change: the adaptive scheduler rescales through RESTARTING, which is then
// not a failure. A failure during the rescale still shows, as FAILING or FAILED, or as a target
// not reached in time.
func rescalingInPlace(rc *Context) bool {
	if rc.App == nil {
		return false
	}
	as := rc.App.Status.Autoscaler
	return rc.App.Status.Phase == v1beta1.PhaseRescaling || as != nil && as.Target != nil && !as.Target.Restart
}

// requestVertexParallelism sets each vertex's upper bound to its target, unless it already is.
func requestVertexParallelism(rc *Context, hash, jobID string, target map[string]int32) error {
	url := rc.FlinkURL(hash)
	reqs, err := rc.Flink().Flink().GetJobResourceRequirements(rc, url, jobID)
	if err != nil {
		return err
	}
	changed := false
	for id, r := range reqs {
		if want, ok := target[id]; ok && r.Parallelism.UpperBound != want {
			r.Parallelism.UpperBound, r.Parallelism.LowerBound = want, 1
			reqs[id] = r
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return rc.Flink().Flink().UpdateJobResourceRequirements(rc, url, jobID, reqs)
}
