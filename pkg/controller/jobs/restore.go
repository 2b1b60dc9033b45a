package jobs

import (
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// StatePoint is a place a job's state can be restored from, and when that state was taken.
type StatePoint struct {
	Path string
	At   time.Time
}

// RestorePolicy is what the restore choice is bounded by.
type RestorePolicy struct {
	// MaxAge is how old the newest state may be to be restored.
	MaxAge time.Duration
	// WithoutState allows a start without state when no usable state exists.
	WithoutState bool
}

// RestoreChoice is what the restore policy decided.
type RestoreChoice struct {
	// Path is the state to restore; "" starts without state.
	Path string
	// Problem says why no state may be restored; "" when Path can be used, or when the policy
	// allows starting without state (WithoutState).
	Problem string
	// WithoutState is set when no usable state exists and the policy allows that.
	WithoutState bool
	// InDoubt is set with Problem when a savepoint asked of the job may have completed, newer than
	// any state known, and Flink cannot say: no other state stands in for it.
	InDoubt bool
	// Unanswered is set when Flink was to be asked for the job's state and did not answer: no
	// choice is made without Flink's word, which may be newer than anything recorded. The caller
	// tries again.
	Unanswered error
}

// ChooseRestore is the one restore policy: the newest of the points, if it is younger than the
// policy's MaxAge. Without such state the job starts without state only when the policy allows it:
// never silently, never from older state than the newest known.
func ChooseRestore(points []StatePoint, now time.Time, policy RestorePolicy) RestoreChoice {
	newest := Newest(points)
	var problem string
	switch {
	case newest == nil:
		problem = "no savepoint or retained checkpoint was found"
	case now.Sub(newest.At) > policy.MaxAge:
		problem = fmt.Sprintf("the newest state %s is %s old, more than maxCheckpointRestoreAgeSeconds (%s)",
			newest.Path, now.Sub(newest.At).Round(time.Second), policy.MaxAge)
	default:
		return RestoreChoice{Path: newest.Path}
	}
	if policy.WithoutState {
		return RestoreChoice{WithoutState: true}
	}
	return RestoreChoice{Problem: problem}
}

// missingState finds, in Flink's words, the state a restore could not find: its
// AbstractFsCheckpointStorageAccess says "Cannot find checkpoint or savepoint file/directory '<path>'".
var missingState = regexp.MustCompile(`Cannot find checkpoint or savepoint file/directory '([^']{1,1000})'`)

// MissingState is the restore path a failed start's text says Flink could not find; "" when it
// says no such thing.
func MissingState(failure string) string {
	if m := missingState.FindStringSubmatch(failure); m != nil {
		return m[1]
	}
	return ""
}

// Newest is the newest of the points; nil when there are none.
func Newest(points []StatePoint) *StatePoint {
	var newest *StatePoint
	for i := range points {
		if newest == nil || points[i].At.After(newest.At) {
			newest = &points[i]
		}
	}
	return newest
}

// FlinkState is the state Flink reports for a job: its newest externalized checkpoint, and the
// savepoints it lists completed since one of the triggers was asked for.
func (p *Pass) FlinkState(ref Ref, asked ...Trigger) []StatePoint {
	out, _ := p.AskFlinkState(ref, asked...)
	return out.Points
}

// FlinkAnswer is what Flink's checkpoint statistics tell of a job's state.
type FlinkAnswer struct {
	// Points are its newest externalized checkpoint, and the savepoints Flink lists completed
	// since one of the triggers asked about was asked for.
	Points []StatePoint
	// TakenAt is when Flink took each completed state it lists, by path, to the millisecond:
	// status keeps times to the second, and a savepoint and a checkpoint taken within one second
	// are ordered by Flink's times, not by what status kept of them.
	TakenAt map[string]time.Time
	// Discarded is the job's newest checkpoint when Flink reports it discarded (its retention
	// policy, as the job ended): none older is left either. Its time is Flink's.
	Discarded *StatePoint
	// Restored is the checkpoint the job restored at its last failover, when it completed none
	// since: Flink's statistics start again with each JobMaster and list no other. It is dated by
	// the restore, for Flink does not say when it was taken.
	Restored *StatePoint
	// StartedAt is when the JobMaster that answers started the job (Pass.StartedAt): its
	// statistics list nothing the one before completed.
	StartedAt time.Time
}

// Covers tells whether the answer settles the doubt of each trigger asked about: Flink's
// statistics list the savepoints completed since it was asked for when the JobMaster that answers
// ran the job then (explorer seed 47000405: the savepoint the JobMaster before a failover
// completed was in no statistics of the one after, whose answer was taken for "none completed"),
// and a state Flink lists as taken after it is newer than its savepoint, or that savepoint itself.
// Both comparisons allow for a JobManager clock TakeoverSkew off the operator's.
func (a FlinkAnswer) Covers(asked []Trigger) bool {
	for _, t := range asked {
		since := t.since()
		if !t.Asked() || !a.StartedAt.IsZero() && a.ranWhenSent(t) {
			continue
		}
		if !slices.ContainsFunc(a.Points, func(p StatePoint) bool { return p.At.After(since.Add(TakeoverSkew)) }) {
			return false
		}
	}
	return true
}

// ranWhenSent tells whether the JobMaster that answers ran the job when the trigger was sent (or,
// not sent yet, asked for): its statistics list what the trigger's savepoint completed.
func (a FlinkAnswer) ranWhenSent(t Trigger) bool {
	if !t.Sent.IsZero() {
		return !t.startedAnotherTime(a.StartedAt)
	}
	return a.StartedAt.Before(t.Time.Add(-TakeoverSkew))
}

// Listed is when Flink took each completed state its statistics of a job list, by path, and the
// earliest of those in its history (zero when the history lists none): a savepoint or checkpoint of
// the job that the history does not list is older than every one it does (it lists the newest, and
// a JobMaster that took the job over lists only what it took since). The newest completed
// checkpoint and savepoint are listed beside the history, and may be older than a state it dropped
// (attack review of 4f3e264: a history of one kept a newer savepoint only).
func Listed(cps *client.CheckpointStats) (taken map[string]time.Time, earliest time.Time) {
	taken = map[string]time.Time{}
	add := func(c client.Checkpoint, history bool) {
		if c.Status != "COMPLETED" || !Restorable(c.ExternalPath) {
			return
		}
		at := time.UnixMilli(c.TriggerTimestamp)
		taken[c.ExternalPath] = at
		if history && (earliest.IsZero() || at.Before(earliest)) {
			earliest = at
		}
	}
	for _, c := range cps.History {
		add(c, true)
	}
	for _, c := range []*client.Checkpoint{cps.Latest.Completed, cps.Latest.Savepoint} {
		if c != nil {
			add(*c, false)
		}
	}
	return taken, earliest
}

// AskFlinkState is FlinkState, with the error when Flink did not tell the job's checkpoints: a
// restore chosen without them may be older than what Flink holds.
func (p *Pass) AskFlinkState(ref Ref, asked ...Trigger) (FlinkAnswer, error) {
	out := FlinkAnswer{TakenAt: map[string]time.Time{}}
	cps, err := p.Checkpoints(ref)
	if err != nil {
		return out, err
	}
	if len(asked) > 0 {
		if out.StartedAt, err = p.StartedAt(ref); err != nil {
			return out, err
		}
	}
	listed := append([]client.Checkpoint(nil), cps.History...)
	for _, c := range []*client.Checkpoint{cps.Latest.Completed, cps.Latest.Savepoint} {
		if c != nil {
			listed = append(listed, *c)
		}
	}
	for _, c := range listed {
		if c.Status == "COMPLETED" && Restorable(c.ExternalPath) {
			out.TakenAt[c.ExternalPath] = time.UnixMilli(c.TriggerTimestamp)
		}
	}
	if c := cps.Latest.Completed; c != nil && c.Discarded {
		out.Discarded = &StatePoint{c.ExternalPath, time.UnixMilli(c.TriggerTimestamp)}
	}
	if r := cps.Latest.Restored; cps.Latest.Completed == nil && r != nil && !r.IsSavepoint && Restorable(r.ExternalPath) {
		out.Restored = &StatePoint{r.ExternalPath, time.UnixMilli(r.RestoreTimestamp)}
	}
	if c := cps.Latest.Completed; c != nil && Restorable(c.ExternalPath) && !c.Discarded {
		// A checkpoint Flink discarded (its retention policy, as the job ended) is no state to
		// restore, however newest (explorer seed 10000110).
		out.Points = append(out.Points, StatePoint{c.ExternalPath, time.UnixMilli(c.TriggerTimestamp)})
	}
	for _, c := range listed {
		if c.IsSavepoint && c.Status == "COMPLETED" && Restorable(c.ExternalPath) && askedBefore(asked, c.TriggerTimestamp) {
			out.Points = append(out.Points, StatePoint{c.ExternalPath, time.UnixMilli(c.TriggerTimestamp)})
		}
	}
	return out, nil
}

// askedBefore tells whether one of the triggers was asked for at or before ms: a savepoint Flink
// took since may be that trigger's.
func askedBefore(asked []Trigger, ms int64) bool {
	for _, t := range asked {
		if t.Asked() && t.Time.UnixMilli() <= ms {
			return true
		}
	}
	return false
}

// Restorable tells whether a checkpoint's path can be restored from: Flink names checkpoints
// that were not externalized "<checkpoint-not-externally-addressable>".
func Restorable(path string) bool { return path != "" && path[0] != '<' }

// CheckpointProblem says why the job's newest retained checkpoint cannot carry its state across a
// cancel, or "" when it can. It is asked before the cancel, while the job runs: a savepoint can
// still be taken instead. retainedOnCancel says whether the job's configuration keeps its
// checkpoints when it is cancelled, and retention names that setting for the message.
func (p *Pass) CheckpointProblem(ref Ref, maxAge time.Duration, retainedOnCancel bool, retention string) string {
	cps, err := p.Checkpoints(ref)
	if err != nil {
		return fmt.Sprintf("its checkpoints could not be read: %v", err)
	}
	c := cps.Latest.Completed
	if c == nil || !Restorable(c.ExternalPath) {
		return "no externalized checkpoint was found"
	}
	if c.Discarded {
		return fmt.Sprintf("Flink discarded its newest checkpoint %s", c.ExternalPath)
	}
	if age := p.Now.Sub(time.UnixMilli(c.TriggerTimestamp)); age > maxAge {
		return fmt.Sprintf("the newest checkpoint %s is %s old, more than maxCheckpointRestoreAgeSeconds (%s)",
			c.ExternalPath, age.Round(time.Second), maxAge)
	}
	if !retainedOnCancel {
		return fmt.Sprintf("checkpoint %s would be deleted by cancelling the job because %s", c.ExternalPath, retention)
	}
	return ""
}
