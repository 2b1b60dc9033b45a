package flinkapplication

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// promoteOrAbort applies spec.blueGreen's promotion knobs during DualRunning. Auto promotes the new
// version once its job has passed the health gate for promoteAfterSeconds: at once, or by moving the
// application's Service to it and keeping the previous version for teardownDelaySeconds. Without a
// pass within abortAfterSeconds of running beside the deployed version, or once its job fails, the new
// version is torn down and the application ends DeployFailed with reason BlueGreenAborted; the
// deployed version was never touched.
func promoteOrAbort(rc *Context) Outcome {
	st := &rc.App.Status
	s, c := jobstate.Stable(&st.JobOwnerStatus), jobstate.Candidate(&st.JobOwnerStatus)
	bg := rc.App.Spec.BlueGreen
	if bg == nil {
		return stay(0)
	}
	if c.PromotedAt != nil {
		left := seconds(bg.TeardownDelaySeconds, 0) - rc.Now.Sub(c.PromotedAt.Time)
		if left > 0 {
			return stay(left)
		}
		return startTeardown(rc, s, "Promoted", fmt.Sprintf("version %s was promoted and the teardown delay is over", c.Version))
	}
	g := healthGate(rc, c, bg)
	switch {
	case g.failed != "" && bg.AbortAfterSeconds != nil:
		return abortVersion(rc, c, g.failed)
	case g.passed && bg.Promotion == v1beta1.PromotionAuto:
		if seconds(bg.TeardownDelaySeconds, 0) == 0 {
			return startTeardown(rc, s, "Promoted", fmt.Sprintf("version %s passed the health gate", c.Version))
		}
		if err := pointGenericService(rc, c.ClusterHash); err != nil {
			return failed(err)
		}
		t := metav1.NewTime(rc.Now)
		c.PromotedAt = &t
		rc.Event(false, "Promoted", fmt.Sprintf("version %s passed the health gate and serves the application; version %s runs on for %s",
			c.Version, s.Version, seconds(bg.TeardownDelaySeconds, 0)))
		return stay(seconds(bg.TeardownDelaySeconds, 0))
	case !g.passed && bg.AbortAfterSeconds != nil && c.StableTime != nil &&
		rc.Now.Sub(c.StableTime.Time) > seconds(bg.AbortAfterSeconds, 0):
		return abortVersion(rc, c, fmt.Sprintf("it did not pass the health gate within %s: %s", seconds(bg.AbortAfterSeconds, 0), g.waiting))
	}
	return stay(0)
}

// abortVersion tears the new version down and marks its spec failed, so it is not deployed again
// until the spec changes.
func abortVersion(rc *Context, c *v1beta1.DeploymentRecord, cause string) Outcome {
	rc.App.Status.FailedDeployHash = c.SpecHash
	return startTeardown(rc, c, "BlueGreenAborted", fmt.Sprintf("version %s is aborted: %s", c.Version, cause))
}

// gateResult is where a version stands against the health gate.
type gateResult struct {
	passed bool
	// failed says why the version's job has failed; waiting why the gate has not passed yet.
	failed, waiting string
}

// healthGate is the Auto promotion's test of a version's job: RUNNING with every task running,
// without a restart for promoteAfterSeconds (Flink's own timestamps say since when), and with
// minCheckpoints completed checkpoints.
func healthGate(rc *Context, r *v1beta1.DeploymentRecord, bg *v1beta1.BlueGreenSpec) gateResult {
	v := rc.Flink().View(r.ClusterHash, r.JobID)
	switch {
	case v.Liveness == jobs.Stopped:
		return gateResult{failed: v.Evidence}
	case v.Liveness == jobs.Unknown:
		return gateResult{waiting: v.Evidence}
	case v.State() == client.JobFailing:
		return gateResult{failed: fmt.Sprintf("job %s is FAILING", r.JobID)}
	}
	job := v.Details
	if job.State != client.JobRunning || !jobs.AllTasksRunning(job) {
		return gateResult{waiting: fmt.Sprintf("job %s is %s with not every task running", r.JobID, job.State)}
	}
	if ran, need := jobs.RunningFor(job, rc.Now), seconds(bg.PromoteAfterSeconds, 60); ran < need {
		return gateResult{waiting: fmt.Sprintf("job %s has run without a restart for %s of %s", r.JobID, ran.Round(time.Second), need)}
	}
	want := int64(1)
	if bg.MinCheckpoints != nil {
		want = int64(*bg.MinCheckpoints)
	}
	cps, err := rc.Flink().Checkpoints(v.Ref)
	if err != nil {
		return gateResult{waiting: fmt.Sprintf("its checkpoints could not be read: %v", err)}
	}
	if cps.Counts.Completed < want {
		return gateResult{waiting: fmt.Sprintf("job %s completed %d of %d checkpoints", r.JobID, cps.Counts.Completed, want)}
	}
	return gateResult{passed: true}
}

func seconds(s *int32, def int) time.Duration {
	if s == nil {
		return time.Duration(def) * time.Second
	}
	return time.Duration(*s) * time.Second
}

func startTeardown(rc *Context, gone *v1beta1.DeploymentRecord, reason, why string) Outcome {
	rc.App.Status.TeardownHash = gone.SpecHash
	return moveTo(PhaseTeardown, reason, fmt.Sprintf("tearing down version %s (hash %s, job %s): %s",
		gone.Version, gone.SpecHash, gone.JobID, why))
}
