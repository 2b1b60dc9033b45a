package flinksim

import (
	"sort"
	"sync"
	"time"
)

// StateChange is one job status transition.
type StateChange struct {
	State string
	Time  time.Time
}

// JobRecord is the life of one job as recorded in a Timeline.
type JobRecord struct {
	AppKey string
	// JobManager is the JobManager that ran the job last.
	JobManager   string
	JobID        string
	RestoredFrom string
	// Parallelism is the job's parallelism as submitted. A rescale by the
	// adaptive scheduler shows in States (RESTARTING, CREATED, RUNNING) of the
	// same record: the job keeps its id.
	Parallelism int
	// States are the job's transitions. With HA, a JobManager that goes away
	// leaves its jobs SUSPENDED; a JobManager that recovers one continues the
	// same record from INITIALIZING. A job is not alive while suspended.
	States []StateChange
	// LostAt is when the JobManager running the job crashed without HA while the
	// job was still alive; zero otherwise.
	LostAt time.Time
	// RerunOf is the id of the job this one is, when a JobManager that took over
	// with HA ran it again under a new id (Faults.RerunUnderNewJobID): the same
	// job, recovered from HA's latest checkpoint of it (RestoredFrom stays what
	// the job was first submitted with); the record of the old id stays SUSPENDED.
	RerunOf string
}

// AliveFrom is when the job was submitted.
func (r JobRecord) AliveFrom() time.Time {
	if len(r.States) == 0 {
		return time.Time{}
	}
	return r.States[0].Time
}

// AliveUntil is when the job reached a globally terminal state, was lost with
// its JobManager or was suspended; ok is false while it is alive.
func (r JobRecord) AliveUntil() (t time.Time, ok bool) {
	spans := r.aliveSpans()
	if len(spans) == 0 {
		return r.AliveFrom(), len(r.States) > 0
	}
	last := spans[len(spans)-1]
	return last.to, !last.to.IsZero()
}

// span is a period in which a job was alive; to is zero while it still is.
type span struct{ from, to time.Time }

// Span is a period in which a job was alive; To is zero while it still is.
type Span struct{ From, To time.Time }

// AliveSpans splits the job's life at its suspensions under HA: a job is alive from its submission,
// or its recovery, to a globally terminal state, its suspension, or its loss with its JobManager.
func (r JobRecord) AliveSpans() []Span {
	var out []Span
	for _, s := range r.aliveSpans() {
		out = append(out, Span{From: s.from, To: s.to})
	}
	return out
}

// aliveSpans splits the job's life at suspensions under HA.
func (r JobRecord) aliveSpans() []span {
	var out []span
	var cur *span
	for _, s := range r.States {
		ends := isGloballyTerminal(s.State) || s.State == stateSuspended
		if ends && cur != nil {
			cur.to = s.Time
			out = append(out, *cur)
			cur = nil
		}
		if isGloballyTerminal(s.State) {
			return out
		}
		if !ends && cur == nil {
			cur = &span{from: s.Time}
		}
	}
	if cur != nil {
		cur.to = r.LostAt
		out = append(out, *cur)
	}
	return out
}

// Overlap is a period in which two jobs of one application were alive at once,
// which for a streaming application means duplicated output.
type Overlap struct {
	First, Second JobRecord
	From          time.Time
	// To is zero while both jobs are still alive.
	To time.Time
}

// Timeline records job state changes across JobManagers so tests can check
// application-level invariants such as "never two jobs at once".
type Timeline struct {
	mu      sync.Mutex
	records []*JobRecord
	syncers []func()
}

// NewTimeline returns an empty Timeline.
func NewTimeline() *Timeline {
	return &Timeline{}
}

// attach registers a JobManager's lazy evaluation so queries see transitions
// that are due but not yet observed.
func (t *Timeline) attach(sync func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.syncers = append(t.syncers, sync)
}

func (t *Timeline) catchUp() {
	t.mu.Lock()
	syncers := append([]func(){}, t.syncers...)
	t.mu.Unlock()
	for _, s := range syncers {
		s()
	}
}

// register starts a record and returns its handle for later state changes.
func (t *Timeline) register(rec JobRecord) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.records = append(t.records, &rec)
	return len(t.records) - 1
}

func (t *Timeline) recordState(handle int, state string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.records[handle]
	r.States = append(r.States, StateChange{State: state, Time: at})
}

// resume finds the record of a suspended job that a JobManager recovers, so
// that it continues as the same job.
func (t *Timeline) resume(appKey, jobID, jobManager string) (int, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for h := len(t.records) - 1; h >= 0; h-- {
		r := t.records[h]
		if r.AppKey != appKey || r.JobID != jobID || len(r.States) == 0 || !r.LostAt.IsZero() {
			continue
		}
		if r.States[len(r.States)-1].State == stateSuspended {
			r.JobManager = jobManager
			return h, true
		}
	}
	return -1, false
}

func (t *Timeline) recordLost(handle int, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.records[handle]
	if _, ended := r.AliveUntil(); !ended {
		r.LostAt = at
	}
}

// Jobs returns the records of one application in submission order.
func (t *Timeline) Jobs(appKey string) []JobRecord {
	t.catchUp()
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []JobRecord
	for _, r := range t.records {
		if r.AppKey == appKey {
			c := *r
			c.States = append([]StateChange(nil), r.States...)
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].AliveFrom().Before(out[j].AliveFrom()) })
	return out
}

// Overlaps reports every period in which two jobs of appKey were alive at once.
// Touching intervals (one ends the instant the other starts) do not overlap.
func (t *Timeline) Overlaps(appKey string) []Overlap {
	return Overlapping(t.Jobs(appKey))
}

// Overlapping reports every period in which two of the jobs were alive at once: for the jobs of one
// session job, say, among the other jobs of their session cluster.
func Overlapping(jobs []JobRecord) []Overlap {
	var out []Overlap
	for i := range jobs {
		for j := i + 1; j < len(jobs); j++ {
			for _, a := range jobs[i].aliveSpans() {
				for _, b := range jobs[j].aliveSpans() {
					if from, to, ok := intersect(a, b); ok {
						out = append(out, Overlap{First: jobs[i], Second: jobs[j], From: from, To: to})
					}
				}
			}
		}
	}
	return out
}

// intersect is the common part of two spans; a zero to is open-ended.
func intersect(a, b span) (from, to time.Time, ok bool) {
	from = later(a.from, b.from)
	switch {
	case a.to.IsZero():
		to = b.to
	case b.to.IsZero():
		to = a.to
	default:
		to = earlier(a.to, b.to)
	}
	return from, to, to.IsZero() || from.Before(to)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// MostAlive is the largest number of the application's jobs alive at one instant. A BlueGreen
// application runs two while both its versions do, and never three.
func (t *Timeline) MostAlive(appKey string) int { return MostAliveOf(t.Jobs(appKey)) }

// MostAliveOf is the largest number of the jobs alive at one instant, each over its alive spans
// (a job suspended between JobManagers under HA is not alive).
func MostAliveOf(jobs []JobRecord) int {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, j := range jobs {
		for _, s := range j.aliveSpans() {
			edges = append(edges, edge{s.from, +1})
			if !s.to.IsZero() {
				edges = append(edges, edge{s.to, -1})
			}
		}
	}
	// At one instant ends count before starts: a job that starts as another ends is no overlap,
	// as in Overlaps.
	sort.Slice(edges, func(i, k int) bool {
		if edges[i].at.Equal(edges[k].at) {
			return edges[i].delta < edges[k].delta
		}
		return edges[i].at.Before(edges[k].at)
	})
	most, alive := 0, 0
	for _, e := range edges {
		alive += e.delta
		most = max(most, alive)
	}
	return most
}
