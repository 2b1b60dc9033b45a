package jobs

import (
	"context"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// Ref names one Flink job: where its JobManager answers and the job's id.
type Ref struct {
	URL string
	ID  string
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
	// Announce, when set, is told of each Event as it happens.
	Announce func(Event)
	// SavepointFormat is the format of every savepoint the pass triggers, with or without a cancel:
	// "CANONICAL", "NATIVE", or "" for Flink's default. A release before 1.15 is sent none (the
	// client leaves it out), since it knows no format and refuses a request that names one.
	SavepointFormat string

	memo map[string]memoEntry
}

type memoEntry struct {
	value interface{}
	err   error
}

// NewPass starts a pass's view of Flink through api.
func NewPass(ctx context.Context, api client.API, now time.Time, clusters Clusters) *Pass {
	return &Pass{ctx: ctx, flink: newBreaker(api), clusters: clusters, Now: now, memo: map[string]memoEntry{}}
}

// FenceWith makes every call of the pass that changes something in Flink (a trigger, a cancel, a
// submission, an upload, a deletion, a rescale) ask fence first, and fail with its error instead of
// being sent: a replica that cannot be sure it still leads stops acting.
func (p *Pass) FenceWith(fence func() error) { p.flink.fence = fence }

// Flink is the pass's REST client (behind the breaker), for the calls that change something;
// what runs is read from the pass's views instead.
func (p *Pass) Flink() client.API { return p.flink }

// URL is the REST base URL of a cluster.
func (p *Pass) URL(cluster string) string { return p.clusters.URL(cluster) }

// Ref is the reference of a job on a cluster.
func (p *Pass) Ref(cluster, jobID string) Ref {
	ref := Ref{URL: p.URL(cluster), ID: jobID}
	if p.clusters.FlinkVersion != nil {
		ref.FlinkVersion = p.clusters.FlinkVersion(cluster)
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

func (p *Pass) remember(key string, fetch func() (interface{}, error)) (interface{}, error) {
	if e, ok := p.memo[key]; ok {
		return e.value, e.err
	}
	v, err := fetch()
	p.memo[key] = memoEntry{v, err}
	return v, err
}

// Forget drops what the pass observed, after it changed something in Flink.
func (p *Pass) Forget() { p.memo = map[string]memoEntry{} }

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
		view.Liveness, view.Evidence = Judge(p.jobManagerGone(cluster), jobID, job, err)
		return view, nil
	})
	return v.(*View)
}

// Seen is the pass's view of a job if the pass already took it, without asking Flink; nil otherwise.
func (p *Pass) Seen(cluster, jobID string) *View {
	if e, ok := p.memo["view/"+cluster+"/"+jobID]; ok {
		return e.value.(*View)
	}
	return nil
}

// Overview is GET /overview of a cluster.
func (p *Pass) Overview(cluster string) (*client.ClusterOverview, error) {
	v, err := p.remember("overview/"+cluster, func() (interface{}, error) {
		return p.flink.GetClusterOverview(p.ctx, p.URL(cluster))
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
