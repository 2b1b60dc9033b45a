package flinkapplication

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"time"
)

// What the operator could not see of a job's checkpoints. A pass in which GET /jobs/:id/checkpoints
// was answered with an error, or not at all, could not record a newer checkpoint of that job, and
// a checkpoint Flink subsumed meanwhile is no fault of the operator's (invariant 2,
// unseenSubsumption). A pass that did not ask could have, and counts as one that could record.

// checkpointsRead matches the path of GET /jobs/:id/checkpoints behind the explorer's proxy.
var checkpointsRead = regexp.MustCompile(`/jobs/([0-9a-f]{32})/checkpoints$`)

// checkpointRefusals are the jobs whose checkpoints Flink failed to tell in the pass that runs.
type checkpointRefusals struct {
	mu   sync.Mutex
	jobs map[string]bool
}

// refusedCheckpointsPass is a pass of an object, by when it began, and the jobs whose checkpoints
// Flink failed to tell in it.
type refusedCheckpointsPass struct {
	at   time.Time
	jobs map[string]bool
}

// start forgets the refusals of the pass before.
func (r *checkpointRefusals) start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jobs = nil
}

// taken are the refusals of the pass that ran, nil when there were none.
func (r *checkpointRefusals) taken() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.jobs
}

// note takes in an answer to the operator: status 0 is none (the connection was closed).
func (r *checkpointRefusals) note(req *http.Request, status int) {
	m := checkpointsRead.FindStringSubmatch(req.URL.Path)
	if req.Method != http.MethodGet || m == nil || status == http.StatusOK {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.jobs == nil {
		r.jobs = map[string]bool{}
	}
	r.jobs[m[1]] = true
}

// couldRecordBetween tells whether a pass of the object began in [from, to) in which Flink did not
// fail to tell the checkpoints of the job and the operator lived to write status: one that could
// have recorded a newer one.
func (id *identity) couldRecordBetween(jobID string, from, to time.Time) bool {
	for _, p := range id.passes {
		if p.Before(from) || !p.Before(to) || slices.ContainsFunc(id.unwritten, p.Equal) {
			continue
		}
		refused := false
		for _, r := range id.refused {
			refused = refused || r.at.Equal(p) && r.jobs[jobID]
		}
		if !refused {
			return true
		}
	}
	return false
}

// goneUnseen tells whether the state at p is a checkpoint Flink subsumed before at, while its job
// ran on and no pass of the object could record a newer one of it (couldRecordBetween): a state
// no job can start from after at, of which the operator could know nothing newer. It is no floor
// of a later job's restore (floor); what the operator knew before it is.
func (x *explorer) goneUnseen(id *identity, p string, at time.Time) bool {
	gone, vanished := x.history.vanished[p]
	s, seen := x.history.seen[p]
	if p == "" || !vanished || !seen || s.Savepoint || !gone.Before(at) {
		return false
	}
	for _, j := range x.jobsOf(id) {
		if j.JobID == s.JobID {
			end, ended := j.AliveUntil()
			// Gone by its end, not discarded as it ended (the retention on cancel, which a stop
			// that keeps the state must heed): the explorer sees it gone at the step after.
			return ended && !gone.After(end) && !id.couldRecordBetween(j.JobID, gone, end)
		}
	}
	return false
}

// answerRecorder is the proxy's ResponseWriter: it keeps the status the JobManager answered with,
// and lets the world close a connection it will not answer (an unreachable JobManager).
type answerRecorder struct {
	http.ResponseWriter
	status int
}

func (a *answerRecorder) WriteHeader(status int) {
	if a.status == 0 {
		a.status = status
	}
	a.ResponseWriter.WriteHeader(status)
}

func (a *answerRecorder) Write(b []byte) (int, error) {
	if a.status == 0 {
		a.status = http.StatusOK
	}
	return a.ResponseWriter.Write(b)
}

func (a *answerRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := a.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, errors.New("the connection cannot be taken over")
}
