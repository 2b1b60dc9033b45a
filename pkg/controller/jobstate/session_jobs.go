package jobstate

import "github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"

// What a FlinkSessionCluster's status says of the FlinkSessionJobs on it, which both session kinds
// read: the cluster writes it, a job's delete waits for it.

// MaxLeftJobs is how many jobs left running by deleteMode None a session cluster lists in
// status.leftJobs (the CRD's bound).
const MaxLeftJobs = 100

// SessionJobReference is one session job's entry of its cluster's status.jobs: its live job, which
// is the candidate's while it has one (the stable job was stopped for it), as its delete takes it.
func SessionJobReference(j *v1beta1.FlinkSessionJob) v1beta1.SessionJobReference {
	mode := j.Spec.DeleteMode
	if mode == "" {
		mode = v1beta1.DeleteModeSavepoint
	}
	ref := v1beta1.SessionJobReference{Name: j.Name, JobID: j.Status.JobStatus.JobID, State: j.Status.JobStatus.State,
		UID: j.UID, DeleteMode: mode}
	for _, r := range []*v1beta1.DeploymentRecord{j.Status.Deployments.Candidate, j.Status.Deployments.Stable} {
		if r != nil && r.JobID != "" {
			ref.JobID, ref.ClusterHash, ref.RestorePath = r.JobID, r.ClusterHash, StartStateOf(&j.Status.JobOwnerStatus, r)
			break
		}
	}
	return ref
}

// StartStateOf is the state the record's job started from: the record's own once it is stable, the
// one the candidate was sent from before that (deployments.nextRestorePath).
func StartStateOf(st *v1beta1.JobOwnerStatus, r *v1beta1.DeploymentRecord) string {
	if r.RestorePath == "" && r == st.Deployments.Candidate {
		return st.Deployments.NextRestorePath
	}
	return r.RestorePath
}

// LeftJobOn tells whether a job left running by deleteMode None runs on the session cluster's Flink
// cluster with this hash.
func LeftJobOn(st *v1beta1.FlinkSessionClusterStatus, hash string) bool {
	for _, l := range st.LeftJobs {
		if l.ClusterHash == hash {
			return true
		}
	}
	return false
}
