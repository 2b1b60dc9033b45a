package flinkapplication

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaler"
	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaling"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// What the autoscaler's steps share of a decision and its target: how a job's state and a decision
// are told, the target recorded in status.autoscaler before it is applied, and whether a running
// job reached it. The steps (autoscaling.go, autoscaler_apply.go, autoscaler_restart.go) build on
// these.

func nameOr(name, id string) string {
	if name != "" {
		return name
	}
	return id
}

// vertexLines are each vertex's parallelism, recommendation and reason, with its rates.
func vertexLines(d autoscaler.Decision) string {
	var lines []string
	for _, v := range d.Vertices {
		lines = append(lines, fmt.Sprintf("%s: %d -> %d (%s)", nameOr(v.Name, v.ID), v.Current, v.Recommended, v.Reason))
	}
	return strings.Join(lines, "; ")
}

// decisionSummary is the decision in words that change only with it: which vertices would change,
// or why nothing does, without the rates of the moment.
func decisionSummary(d autoscaler.Decision) string {
	var changes []string
	for _, v := range d.Vertices {
		to := v.Recommended
		if p, ok := d.Parallelism[v.ID]; ok && d.Apply {
			to = p // a scale-down waiting for its delay is not applied with the rest
		}
		if to != v.Current {
			changes = append(changes, fmt.Sprintf("%s %d→%d", nameOr(v.Name, v.ID), v.Current, to))
		}
	}
	switch {
	case d.Apply:
		return "rescales " + strings.Join(changes, ", ")
	case len(changes) > 0:
		return "recommends " + strings.Join(changes, ", ")
	}
	if i := strings.Index(d.Reason, "; "); i > 0 && strings.HasPrefix(d.Reason, "recommend-only") {
		return d.Reason[:i]
	}
	return d.Reason
}

// jobState is what the autoscaler needs to know of the job beside its metrics.
func jobState(rc *Context, d *client.JobDetails) autoscaler.JobState {
	s := autoscaler.JobState{Failed: d.State == client.JobFailed, InPlaceRescale: cannotApplyInPlace(rc) == ""}
	s.Restarting = d.State != client.JobRunning
	for _, v := range d.Vertices {
		if v.Tasks.Running < int(v.Parallelism) {
			s.Restarting = true
		}
	}
	if at := d.Timestamps.Running; at > 0 {
		s.LastRescale = time.UnixMilli(at)
	}
	if stats, err := rc.Flink().Checkpoints(rc.Flink().View(jobstate.LiveJob(&rc.App.Status.JobOwnerStatus)).Ref); err == nil && stats.Latest.Failed != nil {
		done := stats.Latest.Completed
		s.CheckpointsFailing = done == nil || stats.Latest.Failed.TriggerTimestamp > done.TriggerTimestamp
	}
	_, jobID := jobstate.LiveJob(&rc.App.Status.JobOwnerStatus)
	s.FreshState = rc.Ledger().NewestPath(jobID) != ""
	// A job that has run with all its tasks for jobStabilizationPeriod since it last (re)started,
	// as after a rescale in place, runs stable at its parallelism: where a way back returns to.
	if period := rc.Config.JobStabilizationPeriod.Duration; !s.Restarting && !s.LastRescale.IsZero() && rc.Now.Sub(s.LastRescale) >= period {
		s.Stable = autoscaler.StableRun{At: s.LastRescale.Add(period), Parallelism: map[string]int{}}
		for _, v := range d.Vertices {
			s.Stable.Parallelism[v.ID] = int(v.Parallelism)
		}
	}
	return s
}

// describeParallelism names each vertex with its target.
func describeParallelism(d *client.JobDetails, target map[string]int32) string {
	var out []string
	for _, v := range d.Vertices {
		if p, ok := target[v.ID]; ok {
			out = append(out, fmt.Sprintf("%s %d", nameOr(v.Name, v.ID), p))
		}
	}
	return "parallelism " + strings.Join(out, ", ")
}

// reachedTarget tells whether every vertex of the job runs at its target parallelism.
func reachedTarget(d *client.JobDetails, target map[string]int32) bool {
	if d.State != client.JobRunning || !jobs.AllTasksRunning(d) {
		return false
	}
	for _, v := range d.Vertices {
		if p, ok := target[v.ID]; ok && v.Parallelism != p {
			return false
		}
	}
	return true
}

// setTarget writes a decision to status.autoscaler as the target in progress, decided for job from.
func setTarget(rc *Context, d autoscaler.Decision, wayBack, restart bool, from string) {
	if prev := rc.App.Status.Autoscaler; prev != nil {
		// A way back is decided from status alone, which names each vertex it showed.
		for i := range d.Vertices {
			for _, v := range prev.Vertices {
				if d.Vertices[i].Name == "" && v.ID == d.Vertices[i].ID {
					d.Vertices[i].Name = v.Name
				}
			}
		}
	}
	st := autoscaling.Status(d)
	st.Reason = decisionSummary(d)
	if wayBack {
		st.Reason = "goes back to the last parallelism that ran stable: " + d.Reason
	}
	if prev := rc.App.Status.Autoscaler; prev != nil {
		st.Applied = prev.Applied
	}
	st.Target = &v1beta1.ScalingTarget{Time: toSecond(rc.Now), Parallelism: map[string]int32{}, WayBack: wayBack, Restart: restart, From: from,
		SpecParallelism: rc.App.Spec.Parallelism}
	for _, id := range slices.Sorted(maps.Keys(d.Parallelism)) {
		st.Target.Parallelism[id] = int32(d.Parallelism[id])
	}
	for i := range st.Vertices {
		st.Vertices[i].Reason = ""
		if p, ok := st.Target.Parallelism[st.Vertices[i].ID]; ok {
			st.Vertices[i].Recommended = p
		}
	}
	rc.App.Status.Autoscaler = st
	rc.Event(wayBack, "ScalingReport", st.Reason+"; "+vertexLines(d))
}

// targetOutdated says why a target no longer applies, "" while it does: it was decided under a
// spec.parallelism the user has changed since. A target recorded before targets kept it applies.
func targetOutdated(rc *Context, t *v1beta1.ScalingTarget) string {
	if t == nil || t.SpecParallelism == 0 || t.SpecParallelism == rc.App.Spec.Parallelism {
		return ""
	}
	return fmt.Sprintf("spec.parallelism changed from %d to %d while the autoscaler applied %s: the target is given up",
		t.SpecParallelism, rc.App.Spec.Parallelism, describeTarget(t))
}

// taskManagersFor is how many TaskManagers give the slots a job at this parallelism takes: its
// vertices share slots, so it takes as many as its widest vertex.
func taskManagersFor(rc *Context, target map[string]int32) int32 {
	var widest int32
	for _, p := range target {
		widest = max(widest, p)
	}
	slots := flink.OwnerFromApplication(rc.App).TaskSlots()
	if slots <= 0 {
		slots = 1
	}
	return (widest + slots - 1) / slots
}

// toSecond is t as status keeps it, to the second.
func toSecond(t time.Time) metav1.Time { return metav1.NewTime(t).Rfc3339Copy() }

// cannotApplyInPlace says why a decision cannot be applied to the running job in place, "" when it
// can.
func cannotApplyInPlace(rc *Context) string {
	switch {
	case rc.App.Spec.DeploymentMode == v1beta1.DeploymentModeBlueGreen:
		return "applying is not done under deploymentMode BlueGreen"
	case !flink.AdaptiveScheduler(rc.App):
		return "applying needs the adaptive scheduler (flinkConfig jobmanager.scheduler: adaptive), which rescales a job in place"
	case !client.HasResourceRequirements(rc.FlinkVersion(jobstate.LiveCluster(&rc.App.Status.JobOwnerStatus))):
		return "applying needs Flink 1.18 or later, whose jobs can be rescaled in place"
	}
	return ""
}

// describeTarget names a target's parallelism per vertex by id.
func describeTarget(t *v1beta1.ScalingTarget) string {
	var out []string
	for _, id := range slices.Sorted(maps.Keys(t.Parallelism)) {
		out = append(out, fmt.Sprintf("%s %d", id, t.Parallelism[id]))
	}
	return "parallelism " + strings.Join(out, ", ")
}
