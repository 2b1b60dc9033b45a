package flinkapplication

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// Savepoints of a running job that keeps running: one per spec.savepointTriggerNonce, and on
// spec.periodicSavepoint's schedule. Taken only in Running, so never while an update, a suspend or a
// delete is under way; an update that starts meanwhile takes over with its own savepoint.

// savepointOnDemand triggers or follows a Manual or Periodic savepoint of the stable job; busy is
// false when there is none to take.
func savepointOnDemand(rc *Context) (out Outcome, busy bool) {
	st := &rc.App.Status
	s := stable(st)
	if s == nil || s.JobID == "" {
		return Outcome{}, false
	}
	v := rc.pass().View(s.ClusterHash, s.JobID)
	if v.Liveness != jobs.Alive {
		return Outcome{}, false
	}
	if s.Savepoint == nil {
		purpose := savepointDue(rc)
		if purpose == "" || rc.Overdue {
			return Outcome{}, false
		}
		if purpose == v1beta1.SavepointManual {
			// Recorded with the trigger, in the same write: one savepoint per nonce.
			st.SavepointTriggerNonce = rc.App.Spec.SavepointTriggerNonce
		}
		s.Savepoint = &v1beta1.SavepointTrigger{TriggerID: jobs.NewID(), Time: metav1.NewTime(rc.Now), Purpose: purpose}
		return persistThenContinue(), true
	}
	purpose := s.Savepoint.Purpose
	if purpose != v1beta1.SavepointManual && purpose != v1beta1.SavepointPeriodic {
		return Outcome{}, false
	}
	sp := takeSavepoint(rc, s, v.Ref, false, true)
	switch {
	case sp.Wait != nil:
		return *sp.Wait, true
	case sp.Failure != "":
		recordSavepoint(rc, purpose, "", sp.Failure)
		rc.event(true, "SavepointFailed", fmt.Sprintf("%s savepoint of job %s failed: %s; the job keeps running", purpose, s.JobID, sp.Failure))
	default:
		recordSavepoint(rc, purpose, sp.Location, "")
	}
	s.Savepoint = nil
	return stay(0), true
}

// savepointDue is the purpose of the savepoint the spec asks for now, or "".
func savepointDue(rc *Context) v1beta1.SavepointPurpose {
	st, spec := &rc.App.Status, rc.App.Spec
	if spec.SavepointTriggerNonce != "" && spec.SavepointTriggerNonce != st.SavepointTriggerNonce {
		return v1beta1.SavepointManual
	}
	if p := spec.PeriodicSavepoint; p != nil && p.IntervalSeconds > 0 {
		since := time.Time{}
		if s := stable(st); s != nil && s.StableTime != nil {
			since = s.StableTime.Time
		}
		for _, r := range st.Savepoints {
			if r.Trigger == v1beta1.SavepointPeriodic && r.Time.After(since) {
				since = r.Time.Time
			}
		}
		if !since.IsZero() && rc.Now.Sub(since) >= time.Duration(p.IntervalSeconds)*time.Second {
			return v1beta1.SavepointPeriodic
		}
	}
	return ""
}

// recordSavepoint adds a savepoint to status.savepoints, keeping the last MaxSavepoints.
func recordSavepoint(rc *Context, purpose v1beta1.SavepointPurpose, path, failure string) {
	st := &rc.App.Status
	r := v1beta1.SavepointRecord{Time: metav1.NewTime(rc.Now), Trigger: purpose, Result: "Completed", Path: path}
	if failure != "" {
		r.Result, r.Reason = "Failed", failure
	}
	st.Savepoints = append(st.Savepoints, r)
	keep := v1beta1.MaxSavepoints
	ret := rc.App.Spec.SavepointRetention
	if ret != nil && ret.Keep > 0 && int(ret.Keep) < keep {
		keep = int(ret.Keep)
	}
	n := len(st.Savepoints)
	if n <= keep {
		return
	}
	gone := st.Savepoints[:n-keep]
	st.Savepoints = append([]v1beta1.SavepointRecord(nil), st.Savepoints[n-keep:]...)
	if ret != nil && ret.DisposeOlder {
		disposeSavepoints(rc, gone)
	}
}

// disposeSavepoints deletes completed savepoints through Flink, never the one the running job was
// restored from (it is its state, until its first checkpoint) and never one a stop is to restore.
// A disposal that fails leaves files behind, which is no reason to hold the job: an Event says so.
func disposeSavepoints(rc *Context, gone []v1beta1.SavepointRecord) {
	st := &rc.App.Status
	hash := liveCluster(st)
	if hash == "" {
		return
	}
	for _, r := range gone {
		if r.Result != "Completed" || r.Path == "" || r.Path == st.JobStatus.RestorePath || r.Path == st.SavepointPath {
			continue
		}
		if err := rc.pass().Flink().DisposeSavepoint(rc, rc.FlinkURL(hash), r.Path); err != nil {
			rc.event(true, "SavepointNotDisposed", fmt.Sprintf("savepoint %s stays: %v", r.Path, err))
			continue
		}
		rc.event(false, "SavepointDisposed", fmt.Sprintf("disposed of savepoint %s (savepointRetention keeps %d)", r.Path, len(st.Savepoints)))
	}
}
