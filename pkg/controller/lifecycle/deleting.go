package lifecycle

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
)

// Deleting deals with the live job per deleteMode before the finalizer goes: Savepoint takes a
// final savepoint and cancels the job, ForceCancel cancels it, None leaves Flink alone. The owned
// clusters then go by garbage collection. A job whose state is unknown is waited for: it is never
// taken as stopped because its JobManager does not answer.
func Deleting(p *Pass) fsm.Outcome {
	st := p.Job
	if !HasFinalizer(p.Meta) {
		return fsm.Stay(fsm.UntilChanged)
	}
	if out, stopping := p.stopSecondVersion(); stopping {
		return out
	}
	// The job is the candidate's while it has one (the stable job was stopped for it), else the
	// stable deployment's.
	rec := jobstate.Candidate(st)
	if rec == nil || rec.JobID == "" {
		rec = jobstate.Stable(st)
	}
	mode := p.Settings.DeleteMode
	if out, held := p.Kind.HoldDelete(rec); held {
		return out
	}
	if mode == v1beta1.DeleteModeNone || rec == nil {
		return p.finishDelete(fmt.Sprintf("deleteMode %s: Flink left alone", mode))
	}
	v := p.Flink().View(rec.ClusterHash, rec.JobID)
	// The delete's own savepoint with cancel: a manual or periodic one in flight is settled on its
	// own and never taken for it. One asked for before the user chose ForceCancel is still followed
	// to its end, so that the state it completed is the one recorded.
	wanted := mode == v1beta1.DeleteModeSavepoint && st.FinalSavepointPath == ""
	end := p.EndJob(v1beta1.SavepointDelete, rec, v, wanted, "FinalSavepoint")
	switch {
	case end.Wait != nil:
		return *end.Wait
	case end.Missing != "":
		p.Event(true, "FinalSavepointMissing", end.Missing)
	case end.SavepointPath != "":
		st.FinalSavepointPath = end.SavepointPath
		p.TrimLedger()
		p.Event(false, "FinalSavepoint", fmt.Sprintf("final savepoint of job %s: %s", rec.JobID, end.SavepointPath))
	}
	if st.FinalSavepointPath == "" {
		p.keepStateAddress(rec, v)
	}
	if st.FinalSavepointPath != "" {
		return p.finishDelete(fmt.Sprintf("job stopped; its state is at %s", st.FinalSavepointPath))
	}
	return p.finishDelete(fmt.Sprintf("job stopped (deleteMode %s); no savepoint was recorded", mode))
}

// keepStateAddress names, in an Event that outlives the object, the newest state the application
// recorded when it goes away without a final savepoint: a suspended job's savepoint, what an update
// had stopped its job with, or the job's newest checkpoint. finalSavepointPath names it only when it
// is a savepoint: a field named savepoint never names a checkpoint.
func (p *Pass) keepStateAddress(rec *v1beta1.DeploymentRecord, v *jobs.View) {
	st := p.Job
	var points []jobs.StatePoint
	if v.Details != nil {
		points = p.Flink().FlinkState(v.Ref, ledger.Trigger(p.Ledger().Pending(rec.JobID)))
	}
	if rec.JobID != "" {
		points = append(points, p.JobState().Recorded(rec.JobID).Points()...)
	}
	path := ""
	if p := jobs.Newest(points); p != nil {
		path = p.Path
	}
	if path == "" {
		// The stable job was stopped before (a suspend, or an update whose job has not run yet):
		// that stop recorded the state to resume from.
		path = st.Deployments.NextRestorePath
	}
	if path == "" {
		return
	}
	if p.Ledger().IsSavepoint(path) {
		st.FinalSavepointPath = path
	}
	p.Event(false, "StateKept", fmt.Sprintf("the job's state is at %s; restore it with %s", path, p.Settings.Field("savepointPath")))
}

// finishDelete removes the finalizer once what status says about the job's state is persisted.
func (p *Pass) finishDelete(msg string) fsm.Outcome {
	if p.Stored != nil && p.StoredJob.FinalSavepointPath != p.Job.FinalSavepointPath {
		return fsm.PersistThenContinue()
	}
	if out, waiting := p.Kind.ReleaseObject(); waiting {
		return out
	}
	return fsm.Outcome{Reason: "Deleted", Message: msg, After: fsm.UntilChanged}
}

// stopSecondVersion cancels the job of the BlueGreen version that does not serve the application,
// before the serving version's job is dealt with per deleteMode: the serving version's state is the
// one recorded. That is the deployed version, unless the new one was promoted automatically and the
// deployed one only runs on for its teardown delay.
func (p *Pass) stopSecondVersion() (fsm.Outcome, bool) {
	st := p.Job
	s, c := jobstate.Stable(st), jobstate.Candidate(st)
	if c == nil || c.JobID == "" || s == nil || s.JobID == "" || p.Settings.DeleteMode == v1beta1.DeleteModeNone {
		return fsm.Outcome{}, false
	}
	second := c
	if c.PromotedAt != nil {
		second = s
	}
	state, err := p.Flink().Cancel(p.Flink().View(second.ClusterHash, second.JobID))
	switch state {
	case jobs.Unknown:
		return fsm.Failed(err), true
	case jobs.Alive:
		return fsm.Stay(0), true
	}
	second.JobID, second.ApplicationID = "", ""
	return fsm.PersistThenContinue(), true
}

// Finalizer holds an object the operator runs a job or a cluster for until its deletion dealt with
// them.
const Finalizer = "job.finalizers.flink.k8s.io"

// HasFinalizer tells whether the object carries the operator's finalizer.
func HasFinalizer(obj metav1.Object) bool {
	for _, f := range obj.GetFinalizers() {
		if f == Finalizer {
			return true
		}
	}
	return false
}
