package jobs

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// Ref names one Flink job: where its JobManager answers and the job's id.
type Ref struct {
	URL string
	ID  string
	// Application is the Flink application (2.3+) the job runs in, when it is not the job's own
	// id: Flink ran the application again under this job's id after a failover.
	Application string
	// FlinkVersion is the Flink release the job's cluster runs, as its owner's spec says: what is
	// sent about the job is what that release takes. Empty means a current release.
	FlinkVersion string
}

// View is what one pass knows of one job: how alive it is and why, and what its JobManager said.
type View struct {
	Ref Ref
	// Cluster is the cluster the job was started on, as the caller names it.
	Cluster  string
	Liveness Liveness
	// Evidence says in words what the liveness rests on.
	Evidence string
	// Details is Flink's answer to GET /jobs/:id; nil when it did not answer.
	Details *client.JobDetails
	// Err is the failed call when Details is nil.
	Err error
	// Rerun is the job Flink runs in this job's application instead of it (2.3+: the application
	// run again under another job id after a JobManager failover), whose owner follows it from now
	// on; the job itself is Unknown meanwhile, never Stopped. "" otherwise.
	Rerun string
}

// State is the job's state as Flink reported it, or "" when it did not.
func (v *View) State() string {
	if v.Details == nil {
		return ""
	}
	return v.Details.State
}

// Answered is the job's reference when its JobManager answered about it, so that Flink can be
// asked for its checkpoints; nil when it did not (gone, or no such job there).
func (v *View) Answered() *Ref {
	if v.Details == nil {
		return nil
	}
	return &v.Ref
}

// Event is something a job operation did that users are told of.
type Event struct {
	Warning         bool
	Reason, Message string
}

// Clusters is what a pass needs to know of the Flink clusters its jobs run on, by the caller's
// name for a cluster.
type Clusters struct {
	// URL is the REST base URL of a cluster's JobManager.
	URL func(cluster string) string
	// JobManagerGone tells whether a cluster's JobManager can no longer run anything: its
	// Deployment is gone and no JobManager pod is left, terminating ones included.
	JobManagerGone func(cluster string) bool
	// FlinkVersion, when set, is the Flink release a cluster runs (its spec's flinkVersion).
	FlinkVersion func(cluster string) string
	// ApplicationOf, when set, is the application a job of a cluster runs in, as its record says
	// ("" when it is the job's own id).
	ApplicationOf func(cluster, jobID string) string
	// Refusal, when set, says why no call may go to a cluster's JobManager now (its address is not
	// the one the caller chose for it); nil when calls may go. A refused cluster gets no call, read
	// or act: each fails at once with the refusal, which is no answer about its jobs.
	Refusal func(cluster string) error
}

// Pass is one pass's view of Flink: each question is asked at most once (until Forget), and after
// a JobManager failed to answer once, its other calls in the pass fail at once with that error, so
// one hung JobManager costs one timeout per pass.
type Pass struct {
	ctx      context.Context
	flink    *breaker
	clusters Clusters
	// Now is the pass's clock reading.
	Now time.Time
	// Overdue is set when the caller's deadline has passed: operations still follow what was asked
	// of Flink, so that what it completed meanwhile is used, but they start nothing new.
	Overdue bool
	// InOrder makes Together run its reads one after another, in the order given: a simulated world
	// whose JobManagers' answers take time on one shared clock then replays a run exactly, where
	// reads in flight together would each see the clock as the others' answers left it.
	InOrder bool
	// Announce, when set, is told of each Event as it happens.
	Announce func(Event)
	// SavepointFormat is the format of every savepoint the pass triggers, with or without a cancel:
	// "CANONICAL", "NATIVE", or "" for Flink's default. A release before 1.15 is sent none (the
	// client leaves it out), since it knows no format and refuses a request that names one.
	SavepointFormat string

	// mu guards memo: the reads of Together share it.
	mu   sync.Mutex
	memo map[string]*memoEntry
}

// memoEntry is one question of the pass; asked is done once its answer is set.
type memoEntry struct {
	asked sync.WaitGroup
	value interface{}
	err   error
}

// NewPass starts a pass's view of Flink through api.
func NewPass(ctx context.Context, api client.API, now time.Time, clusters Clusters) *Pass {
	return &Pass{ctx: ctx, flink: newBreaker(api), clusters: clusters, Now: now, memo: map[string]*memoEntry{}}
}

// FenceWith makes every call of the pass that changes something in Flink (a trigger, a cancel, a
// submission, an upload, a deletion, a rescale) ask fence first, and fail with its error instead of
// being sent: a replica that cannot be sure it still leads stops acting.
func (p *Pass) FenceWith(fence func() error) { p.flink.fence = fence }

// Flink is the pass's REST client (behind the breaker), for the calls that change something;
// what runs is read from the pass's views instead.
func (p *Pass) Flink() client.API { return p.flink }

// URL is the REST base URL of a cluster. It is the only way a pass learns one, so that a cluster
// whose address is refused (Clusters.Refusal) has every call to it fail without being sent.
func (p *Pass) URL(cluster string) string {
	url := p.clusters.URL(cluster)
	if err := p.Refused(cluster); err != nil {
		p.flink.refuse(url, err)
	}
	return url
}

// Refused is why no call may go to the cluster's JobManager now; nil when calls may go.
func (p *Pass) Refused(cluster string) error {
	if p.clusters.Refusal == nil {
		return nil
	}
	return p.clusters.Refusal(cluster)
}

// Ref is the reference of a job on a cluster.
func (p *Pass) Ref(cluster, jobID string) Ref {
	ref := Ref{URL: p.URL(cluster), ID: jobID}
	if p.clusters.FlinkVersion != nil {
		ref.FlinkVersion = p.clusters.FlinkVersion(cluster)
	}
	if p.clusters.ApplicationOf != nil && jobID != "" {
		ref.Application = p.clusters.ApplicationOf(cluster, jobID)
	}
	return ref
}

func (p *Pass) jobManagerGone(cluster string) bool {
	return p.clusters.JobManagerGone != nil && p.clusters.JobManagerGone(cluster)
}

func (p *Pass) announce(warning bool, reason, message string) {
	if p.Announce != nil {
		p.Announce(Event{Warning: warning, Reason: reason, Message: message})
	}
}

// remember asks a question once a pass: a second asker, on the same goroutine or in Together,
// waits for the first one's answer instead of asking Flink again.
func (p *Pass) remember(key string, fetch func() (interface{}, error)) (interface{}, error) {
	p.mu.Lock()
	if e, ok := p.memo[key]; ok {
		p.mu.Unlock()
		e.asked.Wait()
		return e.value, e.err
	}
	e := &memoEntry{}
	e.asked.Add(1)
	p.memo[key] = e
	p.mu.Unlock()
	defer e.asked.Done() // a fetch that panics still lets the others waiting go
	e.value, e.err = fetch()
	return e.value, e.err
}

// Together asks reads at once, each on a goroutine of its own, and returns when all have ended:
// a pass that needs several answers from Flink waits for the slowest of them, not for their sum.
// The reads are the pass's questions (View, OverviewAt, Checkpoints, Jobs); the pass keeps their
// answers, so asking them again afterwards costs nothing. Only reads belong here: a call that
// changes something is ordered after what the pass observed. The first read runs on the caller's
// goroutine; the others must not touch what the caller's goroutine may change meanwhile.
//
// A read that panics panics the caller, only after the other reads ended: the first one as it
// would have alone, another one with its value and the stack of the goroutine it panicked on.
func (p *Pass) Together(reads ...func()) {
	if len(reads) == 0 {
		return
	}
	if p.InOrder {
		for _, read := range reads {
			read()
		}
		return
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed interface{} // the first panic of another read
		stack  []byte
		others = reads[1:]
	)
	for _, read := range others {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if v := recover(); v != nil {
					mu.Lock()
					if failed == nil {
						failed, stack = v, debug.Stack()
					}
					mu.Unlock()
				}
			}()
			read()
		}()
	}
	defer wg.Wait() // also when the first read panics
	reads[0]()
	wg.Wait()
	if failed != nil {
		panic(fmt.Sprintf("%v\n\nin a read asked together, on:\n%s", failed, stack))
	}
}

// Forget drops what the pass observed, after it changed something in Flink.
func (p *Pass) Forget() {
	p.mu.Lock()
	p.memo = map[string]*memoEntry{}
	p.mu.Unlock()
}

// View is the pass's view of a job on a cluster, taken on first use.
func (p *Pass) View(cluster, jobID string) *View {
	v, _ := p.remember("view/"+cluster+"/"+jobID, func() (interface{}, error) {
		view := &View{Ref: p.Ref(cluster, jobID), Cluster: cluster}
		if jobID == "" || cluster == "" {
			view.Liveness, view.Evidence = Stopped, "no job is recorded"
			return view, nil
		}
		job, err := p.flink.GetJob(p.ctx, view.Ref.URL, jobID)
		if err == nil {
			view.Details = job
		}
		view.Err = err
		gone := p.jobManagerGone(cluster)
		view.Liveness, view.Evidence = Judge(gone, jobID, job, err)
		if !gone && client.IsJobNotFound(err, jobID) && client.HasApplications(view.Ref.FlinkVersion) {
			p.weighApplication(view)
		}
		return view, nil
	})
	return v.(*View)
}

// StartedAt is when the JobMaster that runs the job now started it, as its details say: a
// JobMaster that takes the job over (a failover) starts it again, and knows nothing of what the one
// before was asked or completed; a restart by the same JobMaster keeps it. The pass's view of the
// job answers when it has the details.
func (p *Pass) StartedAt(ref Ref) (time.Time, error) {
	v, err := p.remember("details/"+ref.URL+"/"+ref.ID, func() (interface{}, error) {
		if d := p.seenDetails(ref); d != nil {
			return d, nil
		}
		return p.flink.GetJob(p.ctx, ref.URL, ref.ID)
	})
	if err != nil {
		return time.Time{}, err
	}
	d, _ := v.(*client.JobDetails)
	if d == nil || d.StartTime <= 0 {
		return time.Time{}, nil
	}
	return time.UnixMilli(d.StartTime), nil
}

// seenDetails are the job's details in a view the pass already took; nil when it took none.
func (p *Pass) seenDetails(ref Ref) *client.JobDetails {
	p.mu.Lock()
	var found []*memoEntry
	for key, e := range p.memo {
		if strings.HasPrefix(key, "view/") {
			found = append(found, e)
		}
	}
	p.mu.Unlock()
	for _, e := range found {
		e.asked.Wait()
		if v, _ := e.value.(*View); v != nil && v.Ref.URL == ref.URL && v.Ref.ID == ref.ID && v.Details != nil {
			return v.Details
		}
	}
	return nil
}

// Seen is the pass's view of a job if the pass already took it, without asking Flink; nil otherwise.
func (p *Pass) Seen(cluster, jobID string) *View {
	p.mu.Lock()
	e, ok := p.memo["view/"+cluster+"/"+jobID]
	p.mu.Unlock()
	if !ok {
		return nil
	}
	e.asked.Wait()
	v, _ := e.value.(*View)
	return v
}

// Overview is GET /overview of a cluster.
func (p *Pass) Overview(cluster string) (*client.ClusterOverview, error) {
	return p.OverviewAt(cluster, p.URL(cluster))
}

// OverviewAt is Overview with the cluster's URL already known, for a read in Together that must
// not ask the caller's Clusters from another goroutine.
func (p *Pass) OverviewAt(cluster, url string) (*client.ClusterOverview, error) {
	v, err := p.remember("overview/"+cluster, func() (interface{}, error) {
		return p.flink.GetClusterOverview(p.ctx, url)
	})
	if err != nil {
		return nil, err
	}
	return v.(*client.ClusterOverview), nil
}

// Jobs is GET /jobs of a cluster.
func (p *Pass) Jobs(cluster string) ([]client.JobSummary, error) {
	v, err := p.remember("jobs/"+cluster, func() (interface{}, error) {
		return p.flink.GetJobs(p.ctx, p.URL(cluster))
	})
	if err != nil {
		return nil, err
	}
	return v.([]client.JobSummary), nil
}

// Checkpoints is GET /jobs/:id/checkpoints of a job.
func (p *Pass) Checkpoints(ref Ref) (*client.CheckpointStats, error) {
	v, err := p.remember("checkpoints/"+ref.URL+"/"+ref.ID, func() (interface{}, error) {
		return p.flink.GetCheckpoints(p.ctx, ref.URL, ref.ID)
	})
	if err != nil {
		return nil, err
	}
	return v.(*client.CheckpointStats), nil
}
