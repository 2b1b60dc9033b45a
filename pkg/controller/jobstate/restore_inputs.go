package jobstate

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/checkpointbook"
	"github.com/flinkfsm/flinkfsm/pkg/controller/guardian"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
)

// Job is the status side of one owner's jobs as one pass sees it: what the restore policy and the
// guardian are told of what the owner recorded. It holds no Kubernetes or Flink client: the pass
// reads, and hands in what it read.
type Job struct {
	Status   *v1beta1.JobOwnerStatus
	Settings *Settings
	// Noted is the checkpoint book's newest entry of the owner, as the book has it now (the pass
	// itself may note a newer one); false when the book is off or has none.
	Noted func() (checkpointbook.Entry, bool)
	// Written is the book's newest entry of the owner that its page holds; nil when the book is
	// off.
	Written func() (checkpointbook.Entry, bool)
}

// Ledger is the owner's ledger of savepoints and checkpoints.
func (j Job) Ledger() ledger.Ledger { return ledger.Of(&j.Status.Ledger) }

// BookEntry is the job's newest checkpoint in the book, if the book has one for that job.
func (j Job) BookEntry(jobID string) (checkpointbook.Entry, bool) {
	if j.Noted == nil || jobID == "" {
		return checkpointbook.Entry{}, false
	}
	e, ok := j.Noted()
	return e, ok && e.JobID == jobID
}

// BookPoints are the book's state of the job for the restore policy: not a checkpoint Flink
// discarded as the job ended (ledger.RecordDiscarded).
func (j Job) BookPoints(jobID string) []jobs.StatePoint {
	if e, ok := j.BookEntry(jobID); ok && jobs.Restorable(e.Path) && !j.Ledger().Discarded(jobID, e.At) {
		return []jobs.StatePoint{{Path: e.Path, At: e.At}}
	}
	return nil
}

// NewestStatePath is where the job's newest completed state is, as the restore policy finds it:
// the ledger's newest entry, or the book's checkpoint when newer. A state older than it is not
// what a restore needs.
func (j Job) NewestStatePath(jobID string) string {
	newest := jobs.StatePoint{}
	for _, p := range append(j.Ledger().States(jobID), j.BookPoints(jobID)...) {
		if newest.Path == "" || p.At.After(newest.At) {
			newest = p
		}
	}
	if newest.Path == "" {
		// An entry States leaves out (not restorable, say) is still the newest the ledger has.
		return j.Ledger().NewestPath(jobID)
	}
	return newest.Path
}

// NewestWrittenStatePath is where the job's newest state is that status and the book's page hold,
// as they are: what a process that takes over restores from if the job is lost. Durable state is
// kept for it as much as for NewestStatePath: a book entry noted and not written yet can be lost
// with this process (explorer seed 62000064: a savepoint was disposed of because the book had
// noted a newer checkpoint; the operator was killed before the book's write, the job was lost, and
// it started again from an older checkpoint).
func (j Job) NewestWrittenStatePath(jobID string) string {
	written := j
	written.Noted = j.Written
	return written.NewestStatePath(jobID)
}

// Recorded is what the operator recorded of a job, for the restore rule: its completed entries in
// the ledger, its newest checkpoint in the checkpoint book, and the state it started from as a
// record of that very job says: a job replacing it restores nothing older.
func (j Job) Recorded(jobID string) guardian.Job {
	return guardian.Job{ID: jobID, Completed: append(j.Ledger().States(jobID), j.BookPoints(jobID)...), StartedFrom: j.StartedFrom(jobID),
		InDoubt: j.Ledger().InDoubt(jobID)}
}

// StartedFrom is the state a job started from, read only from a record of that very job: the
// stable record's (which jobStatus shows, with Flink's restore time), or the candidate's, which was
// submitted from the next restore path and has not replaced it yet. jobStatus alone is no record of
// a job: until a new job runs stable it still shows what the job before started from, which is
// older than that job's stop.
func (j Job) StartedFrom(jobID string) *jobs.StatePoint {
	st := j.Status
	js := &st.JobStatus
	for _, r := range []*v1beta1.DeploymentRecord{Stable(st), Candidate(st)} {
		if r == nil || r.JobID != jobID || jobID == "" {
			continue
		}
		path := r.RestorePath
		if path == "" && r == Candidate(st) {
			path = st.Deployments.NextRestorePath
		}
		if path == "" && r == Stable(st) && js.JobID == jobID {
			// Flink's word for a job that restored on its own (a JobManager's recovery).
			path = js.RestorePath
		}
		at := j.RecordedTimeOf(r.JobID, path)
		if at.IsZero() && js.RestoreTime != nil && js.RestorePath == path && r == Stable(st) {
			at = js.RestoreTime.Time
		}
		if at.IsZero() && r.SubmittedAt != nil {
			at = r.SubmittedAt.Time
		}
		if IsCheckpointOf(jobID, path) && j.Ledger().Discarded(jobID, at) {
			// The job restored its own checkpoint (a JobManager's recovery): Flink discarded it
			// with the job's other checkpoints as the job ended (explorer seed 51000261: after its
			// newer checkpoints went with its FAILED end, the job was sent from that one, which its
			// newer checkpoints had subsumed long before).
			return nil
		}
		return guardian.StartState(r.JobID, jobID, path, j.BeforeOwnStates(jobID, at))
	}
	return nil
}

// IsStartOf tells whether path is the state the job started from: older than all it completed.
func (j Job) IsStartOf(jobID, path string) bool {
	s := j.StartedFrom(jobID)
	return s != nil && s.Path == path
}

// BeforeOwnStates is at, or just before the oldest state the job completed itself when at is not
// before it: what a job started from is older than anything it completed. A time the operator did
// not record of the state is stood in for by the job's start or Flink's time of its restore, both
// of which move when a JobManager fails over and recovers the job (attack review s9: after an HA
// failover the state a new BlueGreen version started from was dated after the version's own
// checkpoint, and its restart chose it over that checkpoint).
func (j Job) BeforeOwnStates(jobID string, at time.Time) time.Time {
	if at.IsZero() {
		return at
	}
	for _, p := range append(j.Ledger().States(jobID), j.BookPoints(jobID)...) {
		if !at.Before(p.At) {
			at = p.At.Add(-time.Millisecond)
		}
	}
	return at
}

// RecordedTimeOf is when the state at path was taken, as the operator recorded it: the ledger's time
// of it, or the checkpoint book's for the job's checkpoint noted there; zero when neither records it.
// Only then is a job's start, or Flink's time of its restore, the time of what it started from: both
// come later than the state was taken (explorer seed 1090055: a job that restored its newest
// checkpoint on its own, after a savepoint, had that checkpoint dated by the restore, newer than the
// savepoint, and a restart after its JobManager was lost went back behind the savepoint).
func (j Job) RecordedTimeOf(jobID, path string) time.Time {
	if at := j.Ledger().TimeOf(path); !at.IsZero() {
		return at
	}
	if e, ok := j.BookEntry(jobID); ok && e.Path == path {
		return e.At
	}
	return time.Time{}
}

// RecordFlinksCheckpoint writes the job's newest checkpoint, as Flink just listed it, to the
// ledger. The restore chosen now may be overtaken (the new job fails, the user changes the spec
// again) and a later restore after the same job, a rollback's, then reads only what was recorded:
// without it, that one went back to an older checkpoint than this one had started from.
func (j Job) RecordFlinksCheckpoint(jobID string, points []jobs.StatePoint) {
	cluster := ClusterOfJob(j.Status, jobID)
	if cluster == "" {
		return
	}
	l := j.Ledger()
	for _, p := range points {
		if !l.IsSavepoint(p.Path) {
			l.Record(v1beta1.StateCheckpoint, jobID, cluster, p.Path, p.At)
		}
	}
}

// RestoredAtFailover is the checkpoint the job restored at its last failover when it completed none
// since (jobs.FlinkAnswer.Restored), newer than any it completed before, which the operator may not
// have recorded (explorer seed 11000153: the recorded checkpoint was subsumed, the job restored a
// newer one after its JobManager failed over and FAILED before the next, and the suspend kept the
// recorded one, which was gone). Flink does not say when it was taken: a savepoint of the job that
// the ledger dates between the job's newest recorded checkpoint and that restore may be newer or
// older, and then nothing is chosen (the problem says why).
func (j Job) RestoredAtFailover(jobID string, restored *jobs.StatePoint, points []jobs.StatePoint) (*jobs.StatePoint, string) {
	if restored == nil || !IsCheckpointOf(jobID, restored.Path) || slices.ContainsFunc(points, func(p jobs.StatePoint) bool { return p.Path == restored.Path }) {
		return nil, ""
	}
	var since time.Time
	for _, p := range points {
		if IsCheckpointOf(jobID, p.Path) && p.At.After(since) {
			since = p.At
		}
	}
	for _, p := range points {
		if !IsCheckpointOf(jobID, p.Path) && p.At.After(since) && p.At.Before(restored.At) && !j.IsStartOf(jobID, p.Path) {
			return nil, fmt.Sprintf("job %s restored checkpoint %s at a failover, and whether savepoint %s, taken before that, is newer "+
				"Flink does not say", jobID, restored.Path, p.Path)
		}
	}
	return restored, ""
}

// RedeployPending tells whether a savepointRedeployNonce is still to be used: the next job starts
// from the state the user named, whatever the restore policy chooses.
func (j Job) RedeployPending() bool {
	s := j.Settings
	return s.RedeployNonce != "" && s.RedeployNonce != j.Status.SavepointRedeployNonce && (s.RedeployFrom != "" || s.RestoreWaiting != "")
}

// ClusterOfJob is the cluster a job of the owner's records ran on; "" when no record names it.
func ClusterOfJob(st *v1beta1.JobOwnerStatus, jobID string) string {
	for _, r := range []*v1beta1.DeploymentRecord{Stable(st), Candidate(st)} {
		if r != nil && r.JobID == jobID && jobID != "" {
			return r.ClusterHash
		}
	}
	for _, e := range st.Ledger {
		if e.JobID == jobID && jobID != "" && e.ClusterHash != "" {
			return e.ClusterHash
		}
	}
	return ""
}

// GoneState says that the newest state recorded of a job is gone from storage; the caller says how
// the user names another.
func GoneState(path string) string {
	return fmt.Sprintf("the newest recorded state %s is gone from storage (Flink could not find it when a job was started from it, "+
		"or discarded it as the job that took it ended), "+
		"and the job may have completed newer state the operator cannot list", path)
}

// SamePath tells whether two state paths name one place, as Flink writes them back: with or
// without the _metadata file, a trailing slash, or file:// and its authority-less form.
func SamePath(a, b string) bool {
	norm := func(p string) string {
		p = strings.TrimSuffix(strings.TrimSuffix(p, "/_metadata"), "/")
		return strings.Replace(p, "file:///", "file:/", 1)
	}
	return a != "" && norm(a) == norm(b)
}

// TakenAsFlinkSays gives the points Flink lists the time Flink took them, to the millisecond.
func TakenAsFlinkSays(points []jobs.StatePoint, takenAt map[string]time.Time) []jobs.StatePoint {
	for i := range points {
		if at, ok := takenAt[points[i].Path]; ok {
			points[i].At = at
		}
	}
	return points
}

// WithoutCheckpointsOf leaves the job's checkpoints out of the points.
func WithoutCheckpointsOf(jobID string, points []jobs.StatePoint) []jobs.StatePoint {
	var kept []jobs.StatePoint
	for _, p := range points {
		if !IsCheckpointOf(jobID, p.Path) {
			kept = append(kept, p)
		}
	}
	return kept
}

// CheckpointsOf are the job's checkpoints among the points.
func CheckpointsOf(jobID string, points []jobs.StatePoint) []jobs.StatePoint {
	var out []jobs.StatePoint
	for _, p := range points {
		if IsCheckpointOf(jobID, p.Path) {
			out = append(out, p)
		}
	}
	return out
}

// IsCheckpointOf tells whether path is one of the job's checkpoints: Flink names them
// <checkpoint dir>/<job id>/chk-<n>.
func IsCheckpointOf(jobID, path string) bool {
	return jobID != "" && strings.Contains(path, "/"+jobID+"/chk-")
}

// StableFloor is the state a rollback restores, read from a status: the floor of the stable
// deployment's completed states, with the checkpoints book gives of each job (nil: none but the
// ledger's). The guardian keeps it.
func StableFloor(st *v1beta1.JobOwnerStatus, book func(jobID string) []jobs.StatePoint) string {
	s := Stable(st)
	if s == nil {
		return ""
	}
	j := guardian.Job{}
	l := ledger.Of(&st.Ledger)
	for _, e := range st.Ledger {
		if e.ClusterHash == s.ClusterHash && e.JobID != "" && e.Result == v1beta1.StateCompleted && e.Time != nil && jobs.Restorable(e.Path) &&
			!l.IsDiscarded(&e) {
			j.Completed = append(j.Completed, jobs.StatePoint{Path: e.Path, At: ledger.TakenAt(&e)})
			if book != nil {
				j.Completed = append(j.Completed, book(e.JobID)...)
			}
		}
	}
	if s.RestorePath != "" {
		j.StartedFrom = &jobs.StatePoint{Path: s.RestorePath, At: l.TimeOf(s.RestorePath)}
	}
	if f := j.Floor(); f != nil {
		return f.Path
	}
	return ""
}
