package snapshots

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/guardian"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
)

// Refs is what one application, session job or session cluster names of durable state, as read
// from the object (of this shard's caches, or read live from another shard's).
type Refs struct {
	holder guardian.Holder
	// named is the FlinkSnapshot its spec names.
	named string
	// specPath is the savepoint its spec names for its first job or a redeploy.
	specPath string
	// paths are the states it runs from or will start from, its final savepoint, and the newest
	// state and the newest savepoint of each job it records.
	paths []string
	// redeploys are its ledger's Redeploy entries, with their path and time only.
	redeploys []v1beta1.StateEntry
	// pending are the jobs with a savepoint or checkpoint asked for whose result its ledger does
	// not know yet; recorded, the paths its ledger knows.
	pending, recorded []string
}

// ApplicationRefs and SessionJobRefs are what an object of either kind names, the same in every
// shard: the path its spec's first deploy or redeploy starts from (as the pass reads it, Lyft's
// savepointInfo included) while it is still to be used.
func ApplicationRefs(a *v1beta1.FlinkApplication) Refs {
	st := &a.Status.JobOwnerStatus
	return refsOf(v1beta1.FlinkApplicationKind, a.ObjectMeta, PendingSpecPath(jobstate.InitialSavepoint(a), a.Spec.SavepointRedeployNonce, st),
		a.Spec.RestoreSnapshot, st)
}

func SessionJobRefs(j *v1beta1.FlinkSessionJob) Refs {
	st := &j.Status.JobOwnerStatus
	return refsOf(v1beta1.FlinkSessionJobKind, j.ObjectMeta, PendingSpecPath(j.Spec.Job.InitialSavepointPath, j.Spec.Job.SavepointRedeployNonce, st),
		j.Spec.Job.RestoreSnapshot, st)
}

// SessionClusterRefs are the states the jobs a FlinkSessionCluster lists as left running
// (status.leftJobs: a session job deleted with deleteMode None) started from: they run on, and
// restart from that state.
func SessionClusterRefs(c *v1beta1.FlinkSessionCluster) Refs {
	r := Refs{holder: HolderOf(v1beta1.FlinkSessionClusterKind, &c.ObjectMeta)}
	for _, l := range c.Status.LeftJobs {
		r.paths = append(r.paths, l.RestorePath)
	}
	return r
}

func refsOf(kind string, meta metav1.ObjectMeta, specPath, named string, st *v1beta1.JobOwnerStatus) Refs {
	r := Refs{holder: HolderOf(kind, &meta), named: named, specPath: specPath,
		paths: []string{st.JobStatus.RestorePath, st.Deployments.NextRestorePath, st.FinalSavepointPath, st.SavepointPath}}
	l := ledger.Of(&st.Ledger)
	for _, d := range []*v1beta1.DeploymentRecord{jobstate.Stable(st), jobstate.Candidate(st)} {
		if d != nil {
			// The newest savepoint too, whatever the job's retention policy, which the other
			// objects of the namespace do not read: a checkpoint may go with its job (attack
			// review s8: another object's FlinkSnapshot disposed of it).
			r.paths = append(r.paths, d.RestorePath, l.NewestPath(d.JobID), l.NewestSavepointPath(d.JobID))
		}
	}
	r.paths = append(r.paths, jobstate.StableFloor(st, nil))
	for _, e := range st.Ledger {
		if e.Purpose == v1beta1.SavepointRedeploy && e.Time != nil {
			r.redeploys = append(r.redeploys, v1beta1.StateEntry{Path: e.Path, Time: e.Time})
		}
	}
	r.pending, r.recorded = PendingJobs(st), RecordedPaths(st)
	return r
}

// References are what the guardian is told of one object: its redeploys count within the window
// of the retention that asks (0: all).
func (r Refs) References(now time.Time, window time.Duration) guardian.References {
	out := guardian.References{Holder: r.holder}
	add := func(path, why string) {
		if path != "" {
			out.Paths = append(out.Paths, guardian.Use{Name: path, Why: why})
		}
	}
	for _, p := range r.paths {
		add(p, "its jobs run from it or will start from it")
	}
	add(r.specPath, "its spec names it")
	for _, e := range r.redeploys {
		if window == 0 || now.Sub(e.Time.Time) <= window {
			add(e.Path, "it was redeployed from it at "+e.Time.UTC().Format(time.RFC3339))
		}
	}
	if r.named != "" {
		out.Snapshots = append(out.Snapshots, guardian.Use{Name: r.named, Why: "its spec's restoreSnapshot names"})
	}
	out.Pending, out.Recorded = PendingUses(r.pending), r.recorded
	return out
}

// PendingSpecPath is the savepoint a spec names (spec.savepointPath, a session job's
// initialSavepointPath) while it is still to be used: before the object's first job ran, or while a
// savepointRedeployNonce is not yet done. Once used, the state the job started from is in its
// records, and a path left in the spec is history (Lyft's users keep it in their manifests). The
// FlinkSnapshot a spec names by restoreSnapshot is needed for as long as the spec names it.
func PendingSpecPath(path string, nonce v1beta1.Nonce, st *v1beta1.JobOwnerStatus) string {
	firstPending := st == nil || jobstate.Stable(st) == nil || jobstate.Stable(st).JobID == ""
	redeployPending := nonce != "" && (st == nil || nonce != st.SavepointRedeployNonce)
	if firstPending || redeployPending {
		return path
	}
	return ""
}

// HolderOf names an object to the guardian, by its identity.
func HolderOf(kind string, meta *metav1.ObjectMeta) guardian.Holder {
	return guardian.Holder{Kind: kind, Name: meta.Name, UID: string(meta.UID)}
}

// StoredUntilWrite is why the owner needs a state its stored status names and the pass's own no
// longer does: until the pass's status write.
const StoredUntilWrite = "its status as stored names it until this pass writes status"

// OnlyUntilThisWrite tells whether nothing needs the state but the owner's stored status, which
// this pass's write stops naming it in.
func OnlyUntilThisWrite(v guardian.Verdict) bool {
	for _, n := range v.Needs {
		if n.Why != StoredUntilWrite {
			return false
		}
	}
	return len(v.Needs) > 0
}

// PendingJobs are the jobs of the status's ledger with a savepoint or checkpoint asked for whose
// result it does not know yet, or a savepoint whose end can no longer be learned and no newer
// state of the job settled (ledger.InDoubt): until then it may be the job's newest state.
func PendingJobs(st *v1beta1.JobOwnerStatus) []string {
	var out []string
	l := ledger.Of(&st.Ledger)
	for _, e := range st.Ledger {
		if e.JobID == "" || slices.Contains(out, e.JobID) {
			continue
		}
		if e.Result == v1beta1.StatePending || len(l.InDoubt(e.JobID)) > 0 {
			out = append(out, e.JobID)
		}
	}
	return out
}

// PendingUses tell the guardian that the states Flink may have completed for these jobs are needed.
func PendingUses(jobs []string) []guardian.Use {
	var out []guardian.Use
	for _, job := range jobs {
		out = append(out, guardian.Use{Name: job, Why: "a savepoint or checkpoint of its job " + job + " was asked for and its result is not known yet"})
	}
	return out
}

// RecordedPaths are the paths the status's ledger gives to states it knows.
func RecordedPaths(st *v1beta1.JobOwnerStatus) []string {
	var out []string
	for _, e := range st.Ledger {
		if e.Path != "" {
			out = append(out, e.Path)
		}
	}
	return out
}

// PendingJobsNotAnswered are the PendingJobs of a stored status but for savepoints whose answer the
// pass's status (now) already holds.
func PendingJobsNotAnswered(stored, now *v1beta1.JobOwnerStatus) []string {
	if now == nil {
		return PendingJobs(stored)
	}
	answered := map[string]bool{}
	for _, e := range now.Ledger {
		if e.TriggerID != "" && e.Result != v1beta1.StatePending {
			answered[e.TriggerID] = true
		}
	}
	unanswered := *stored
	unanswered.Ledger = slices.DeleteFunc(slices.Clone(stored.Ledger), func(e v1beta1.StateEntry) bool {
		return e.TriggerID != "" && answered[e.TriggerID]
	})
	return PendingJobs(&unanswered)
}
