package jobstate

import (
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
)

// status.deployments holds two explicit records: the stable deployment (what runs, and what a
// failed update returns to) and the candidate (what is being deployed). Handlers read and change
// them; the fields the Lyft operator's users read are derived from them once per pass.

// Stable is the stable deployment's record: what runs, and what a failed update returns to.
func Stable(st *v1beta1.JobOwnerStatus) *v1beta1.DeploymentRecord {
	return st.Deployments.Stable
}

// Candidate is the record of the deployment in progress; nil when none is.
func Candidate(st *v1beta1.JobOwnerStatus) *v1beta1.DeploymentRecord {
	return st.Deployments.Candidate
}

// LiveJob is the stable deployment's job, or empty when it has none: before the first deploy, and
// once the job was stopped for an update, a suspend or a recovery, or found gone.
func LiveJob(st *v1beta1.JobOwnerStatus) (hash, jobID string) {
	if s := Stable(st); s != nil && s.JobID != "" {
		return s.ClusterHash, s.JobID
	}
	return "", ""
}

// LiveCluster is the stable deployment's cluster; "" before a job first ran stable.
func LiveCluster(st *v1beta1.JobOwnerStatus) string {
	if s := Stable(st); s != nil {
		return s.ClusterHash
	}
	return ""
}

// TargetCluster is the cluster the deployment in progress deploys to: its own, or the live one
// when the change is made in place.
func TargetCluster(st *v1beta1.JobOwnerStatus) string {
	if c := Candidate(st); c != nil {
		return c.ClusterHash
	}
	return ""
}

// TargetSpecHash is the spec the deployment in progress deploys; "" when none is in progress.
func TargetSpecHash(st *v1beta1.JobOwnerStatus) string {
	if c := Candidate(st); c != nil {
		return c.SpecHash
	}
	return ""
}

// RunningSpecHash is the spec the stable deployment runs. It is its cluster's hash unless the
// parallelism was changed in place.
func RunningSpecHash(st *v1beta1.JobOwnerStatus) string {
	if s := Stable(st); s != nil {
		return s.SpecHash
	}
	return ""
}

// Updating tells whether a new spec is being deployed (not a restart or a rollback of the stable one).
func Updating(st *v1beta1.JobOwnerStatus) bool {
	c := Candidate(st)
	return c != nil && c.Kind == v1beta1.DeploymentUpdate
}

// RecordRestart records the stable spec as the candidate on the stable cluster: a restart after the
// job was lost or failed, or a rollback after an update failed.
func RecordRestart(st *v1beta1.JobOwnerStatus, kind v1beta1.DeploymentKind) *v1beta1.DeploymentRecord {
	s := Stable(st)
	c := &v1beta1.DeploymentRecord{Kind: kind, Version: s.Version, SpecHash: s.SpecHash, Spec: s.Spec, ClusterHash: s.ClusterHash}
	st.Deployments.Candidate = c
	return c
}

// KeepCandidateJob makes the job of a restart or a rollback of the stable spec, on the stable
// cluster, the stable record's job again when it is given up on while it may still run: the next
// change stops it before anything else starts. The record takes the state that job started from
// too, for it is now the record of that very job (startedFrom): the state the job before started
// from is older than what that job completed, and a job that replaces this one must start from
// nothing older than this one's start, even when it failed before its first checkpoint.
func KeepCandidateJob(st *v1beta1.JobOwnerStatus) {
	c, s := Candidate(st), Stable(st)
	TakeJob(s, c)
	s.SubmittedAt, s.RestorePath = c.SubmittedAt, CandidateStart(st)
}

// TakeJob makes rec's job the job of from: its id, and the application Flink runs it in
// (applicationID). The two go together wherever a record's job changes hands: a record naming a
// job without its application takes the job for gone at the next failover that runs the
// application again (attack review s7).
func TakeJob(rec, from *v1beta1.DeploymentRecord) {
	rec.JobID, rec.ApplicationID = from.JobID, from.ApplicationID
}

// ForgetJob clears rec's job: it is no longer anyone's.
func ForgetJob(rec *v1beta1.DeploymentRecord) {
	rec.JobID, rec.ApplicationID, rec.SubmittedAt = "", "", nil
}

// CandidateStart is the state the candidate's job starts from: its record's once it ran stable,
// else the next restore path, which it is submitted from.
func CandidateStart(st *v1beta1.JobOwnerStatus) string {
	if c := Candidate(st); c != nil && c.RestorePath != "" {
		return c.RestorePath
	}
	return st.Deployments.NextRestorePath
}

// ClearTarget forgets the deployment in progress.
func ClearTarget(st *v1beta1.JobOwnerStatus) {
	st.Deployments.Candidate = nil
}

// StopRecorded marks the stable deployment's job stopped (on purpose or found gone): it is no
// longer anyone's job. Savepoints asked of it stay in the ledger until they end.
func StopRecorded(st *v1beta1.JobOwnerStatus) {
	if s := Stable(st); s != nil {
		ForgetJob(s)
	}
}

// DeriveJobStatus writes the fields of a job owner's status that are derived from its records and
// its ledger, and returns the trigger of the savepoint in progress.
func DeriveJobStatus(st *v1beta1.JobOwnerStatus) (inProgress string) {
	// The job the application runs now: the candidate's once the stable job was stopped for it; a
	// BlueGreen application shows its deployed version's while both run.
	job := Stable(st)
	if c := Candidate(st); c != nil && (c.JobID != "" || job == nil) && (job == nil || job.JobID == "") {
		job = c
	}
	before := st.JobStatus.JobID
	st.JobStatus.JobID, st.JobStatus.ClusterHash = "", ""
	if job != nil && job.JobID != "" {
		st.JobStatus.JobID, st.JobStatus.ClusterHash = job.JobID, job.ClusterHash
	}
	if st.JobStatus.JobID != before {
		// The state shown is that of the job it was read of: another job's says nothing of this
		// one (attack review of c84e7a2: a promoted BlueGreen version showed the deployed job's
		// FAILED, and the restore policy took it for the new job's own end).
		st.JobStatus.State = ""
	}
	return DeriveFromLedger(st)
}

// DeriveFromLedger writes the fields that show the ledger: status.savepoints, savepointTriggerId
// (the newest savepoint in flight, a stop's first), savepointPath (the final savepoint once deleted,
// else the savepoint the next job starts from) and jobStatus.lastCheckpoint (the job's recorded one).
func DeriveFromLedger(st *v1beta1.JobOwnerStatus) (inProgress string) {
	l := ledger.Of(&st.Ledger)
	st.Savepoints = l.Savepoints(v1beta1.MaxSavepoints)
	for _, e := range l.AllPending() {
		if inProgress == "" || ledger.IsStop(e.Purpose) {
			inProgress = e.TriggerID
		}
	}
	st.SavepointPath = ""
	switch next := st.Deployments.NextRestorePath; {
	case st.FinalSavepointPath != "":
		st.SavepointPath = st.FinalSavepointPath
	case l.IsSavepoint(next):
		st.SavepointPath = next
	}
	js := &st.JobStatus
	js.LastCheckpointPath, js.LastCheckpointTime = "", nil
	if c := l.Checkpoint(js.JobID); c != nil {
		js.LastCheckpointPath, js.LastCheckpointTime = c.Path, c.Time
	}
	return inProgress
}

// RollingBack tells whether the deployment in progress is a rollback to the stable spec.
func RollingBack(st *v1beta1.JobOwnerStatus) bool {
	c := Candidate(st)
	return c != nil && c.Kind == v1beta1.DeploymentRollback
}
