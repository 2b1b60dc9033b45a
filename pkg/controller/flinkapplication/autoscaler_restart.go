package flinkapplication

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaler"
	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaling"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// Applying a decision by restarting the job, where the cluster cannot rescale a running job in
// place (no adaptive scheduler, or Flink 1.17): the target is written to status first, then the job
// is stopped the way its upgradeMode keeps state (a savepoint, or its newest checkpoint) and
// submitted again on the same cluster, from that state, with a parallelism per vertex
// (pipeline.jobvertex-parallelism-overrides); the TaskManagers follow the widest vertex. The stop
// and the submission are the state machine's own (Savepointing or Cancelling, then Submitting), so
// an operator restarted anywhere on the way carries on from status as for any restart.
//
// The parallelism the autoscaler put in force (status.autoscaler.applied) goes with every job the
// application submits afterwards, so that a job recovered or updated does not fall back to
// spec.parallelism and wait for the autoscaler to decide again.
//
// The way back: a job that fails after a rescale, or whose restart at the target cannot start, is
// submitted again from its newest state at the last parallelism that ran stable, once.

// cannotApplyByRestart says why a decision cannot be applied by restarting the job, "" when it can.
func cannotApplyByRestart(rc *Context) string {
	switch {
	case rc.App.Spec.DeploymentMode == v1beta1.DeploymentModeBlueGreen:
		return "applying is not done under deploymentMode BlueGreen"
	case !client.HasParallelismOverrides(rc.FlinkVersion(jobstate.LiveCluster(&rc.App.Status.JobOwnerStatus))):
		return "applying needs Flink 1.17 or later, which takes a parallelism per vertex at submission"
	}
	return ""
}

// applyByRestart carries a restart target through: while the job it was decided for runs, it is
// stopped per upgradeMode, with a restart of the stable spec on the same cluster recorded as the
// deployment in progress; once another job runs, the target is done.
func applyByRestart(rc *Context) Outcome {
	st := &rc.App.Status
	t := st.Autoscaler.Target
	hash, jobID := jobstate.LiveJob(&st.JobOwnerStatus)
	if jobID == t.From {
		jobstate.RecordRestart(&st.JobOwnerStatus, v1beta1.DeploymentRestart)
		return rc.StopLiveJob("Autoscaling", "the autoscaler "+st.Autoscaler.Reason+" with a new job (the cluster cannot rescale a running job in place)")
	}
	v := rc.Flink().View(hash, jobID)
	if v.Liveness == jobs.Unknown || v.Details == nil {
		return stay(0)
	}
	finishScaling(rc, hash, v.Details)
	return stay(0)
}

// finishScaling ends a target once a job runs after it: what runs is what is in force from now on,
// and the TaskManagers are as many as it needs.
func finishScaling(rc *Context, hash string, d *client.JobDetails) error {
	st := rc.App.Status.Autoscaler
	t := st.Target
	st.Target = nil
	if t.WayBack {
		// The autoscaler holds off for its cool-down, longer than a record of recommendations spans.
		rc.env.scaling.Forget(rc.Key())
	} else {
		rc.env.scaling.Rescaled(rc.Key(), d.JID)
	}
	running := map[string]int32{}
	for _, v := range d.Vertices {
		running[v.ID] = v.Parallelism
	}
	spec := rc.App.Spec.Parallelism
	if t.SpecParallelism != 0 {
		// What was decided under a spec is in force for that spec only.
		spec = t.SpecParallelism
	}
	st.Applied = &v1beta1.AppliedParallelism{Parallelism: running, SpecParallelism: spec}
	if reachedTarget(d, t.Parallelism) {
		rc.Event(false, "Autoscaled", fmt.Sprintf("job %s runs at %s", d.JID, describeParallelism(d, t.Parallelism)))
	} else {
		rc.Event(true, "ScalingAbandoned", fmt.Sprintf("job %s runs at %s, not at the target %s", d.JID,
			describeParallelism(d, running), describeParallelism(d, t.Parallelism)))
	}
	return rc.ScaleTaskManagers(hash, taskManagersFor(rc, running))
}

// scalingOverrides is the parallelism per vertex a job of the application is submitted with: a
// restart target's while one is applied, else what the autoscaler put in force, unless
// spec.parallelism changed since; nil when there is none or the release cannot take it.
func scalingOverrides(rc *Context) map[string]int32 {
	st := rc.App.Status.Autoscaler
	switch {
	case st == nil || cannotApplyByRestart(rc) != "":
		return nil
	case st.Target != nil && st.Target.Restart && targetOutdated(rc, st.Target) == "":
		return st.Target.Parallelism
	case st.Applied != nil && st.Applied.SpecParallelism == rc.App.Spec.Parallelism:
		return st.Applied.Parallelism
	}
	return nil
}

// withScaling adds the autoscaler's parallelism per vertex to a FlinkApplication's submission.
func withScaling(rc *Context, p jobParams) jobParams {
	o := scalingOverrides(rc)
	if len(o) == 0 {
		return p
	}
	pairs := make([]string, 0, len(o))
	for _, id := range slices.Sorted(maps.Keys(o)) {
		pairs = append(pairs, id+":"+strconv.Itoa(int(o[id])))
	}
	p.FlinkConfig = maps.Clone(p.FlinkConfig)
	if p.FlinkConfig == nil {
		p.FlinkConfig = map[string]string{}
	}
	p.FlinkConfig[client.ParallelismOverridesKey] = strings.Join(pairs, ",")
	return p
}

// taskManagersToSubmit is how many TaskManagers the job about to be submitted needs: for the
// autoscaler's parallelism when it has one, else for spec.parallelism.
func taskManagersToSubmit(rc *Context, app *v1beta1.FlinkApplication) (n int32, scaled bool) {
	if o := scalingOverrides(rc); len(o) > 0 {
		return taskManagersFor(rc, o), true
	}
	return flink.TaskManagerReplicas(app), false
}

// scalingWayBack starts a job that FAILED after the autoscaler rescaled it again from its newest
// state at the last parallelism that ran stable, with a target that says so; ok is false when the
// failure is not the rescale's to answer for, and the phase's own rules apply.
func scalingWayBack(rc *Context, v *jobs.View) (out Outcome, ok bool) {
	st := rc.App.Status.Autoscaler
	spec := rc.App.Spec.Autoscaler
	if v.State() != client.JobFailed || st == nil || spec == nil || spec.Mode != v1beta1.AutoscalerApply || cannotApplyByRestart(rc) != "" {
		return Outcome{}, false
	}
	if st.Target != nil && st.Target.WayBack {
		return Outcome{}, false
	}
	cfg, err := autoscaling.Config(spec, rc.Config.Autoscaler, rc.ReadinessTimeout())
	if err != nil {
		return Outcome{}, false
	}
	state := jobState(rc, v.Details)
	state.Failed, state.Stable = true, autoscaler.StableRun{}
	if st.Target != nil {
		// Failed before it ran at the target: the rescale took effect when it was asked for.
		state.LastRescale = st.Target.Time.Time
	}
	d := autoscaler.WayBack(rc.Now, cfg, state, autoscaling.History(st, nil))
	if !d.Apply {
		return Outcome{}, false
	}
	setTarget(rc, d, true, true, v.Ref.ID)
	return recoverStoppedJob(rc, v, "ScalingWentBack", fmt.Sprintf("job %s FAILED after the autoscaler rescaled it", v.Ref.ID)), true
}

// scalingRestartFailed answers for a restart target whose stop or new job failed: a stop that did
// not happen leaves the job running as it was; a new job that failed goes back once, from its newest
// state, to the last parallelism that ran stable. ok is false when no such target is in progress,
// or the way back itself failed: then the failure is the deployment's, as for any restart.
func scalingRestartFailed(rc *Context, cause string) (out Outcome, ok bool) {
	st := rc.App.Status.Autoscaler
	if st == nil || st.Target == nil || !st.Target.Restart {
		return Outcome{}, false
	}
	t := st.Target
	js := &rc.App.Status.JobOwnerStatus
	cfg, err := autoscaling.Config(rc.App.Spec.Autoscaler, rc.Config.Autoscaler, rc.ReadinessTimeout())
	if s := jobstate.Stable(js); s != nil && s.JobID != "" {
		// The job was never stopped: it runs on at the parallelism it had.
		jobstate.ClearTarget(js)
		holdScaling(rc, cfg, fmt.Sprintf("the restart at %s could not stop job %s (%s)", describeTarget(t), s.JobID, cause))
		return moveTo(PhaseRunning, "ScalingAbandoned", "the autoscaler's restart did not stop the job: "+cause), true
	}
	c := jobstate.Candidate(js)
	if t.WayBack || err != nil || c == nil || rc.App.Spec.Autoscaler == nil {
		holdScaling(rc, cfg, fmt.Sprintf("the job restarted at %s failed (%s)", describeTarget(t), cause))
		return Outcome{}, false
	}
	d := autoscaler.WayBack(rc.Now, cfg, autoscaler.JobState{Failed: true, LastRescale: rc.Now}, autoscaling.History(st, nil))
	choice := rc.ChooseRestoreInPlace(c.JobID, nil)
	if choice.Problem != "" && !choice.InDoubt {
		// It failed before it checkpointed: the state it started from, the stop's, is the newest.
		choice = rc.ChooseRestoreInPlace(t.From, nil)
	}
	if !d.Apply || choice.Problem != "" {
		holdScaling(rc, cfg, fmt.Sprintf("the job restarted at %s failed (%s)", describeTarget(t), cause))
		return Outcome{}, false
	}
	failedJob := c.JobID
	setTarget(rc, d, true, true, failedJob)
	rc.UseRestore(choice)
	return restartInPlace(rc, "ScalingWentBack", fmt.Sprintf("job %s, restarted by the autoscaler, failed (%s); starting it again from %s",
		failedJob, cause, lifecycle.DescribeState(choice.Path)), false), true
}

// holdScaling gives up the target in progress and holds the autoscaler off for its cool-down.
func holdScaling(rc *Context, cfg autoscaler.Config, why string) {
	st := rc.App.Status.Autoscaler
	st.Target = nil
	hold := toSecond(rc.Now.Add(cfg.CoolDown))
	st.HoldUntil = &hold
	rc.Event(true, "ScalingAbandoned", fmt.Sprintf("%s; the autoscaler holds off until %s", why, hold.UTC().Format("15:04:05")))
}
