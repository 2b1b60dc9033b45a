package flinkapplication

import (
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// JobRef names one Flink job: where its JobManager answers and the job's id. The job operations
// (savepoint, cancel, run, restore) take one, so every kind of resource that runs jobs uses them
// as they are.
type JobRef struct {
	URL string
	ID  string
}

// JobView is what one pass knows of one job: how alive it is and why, and what its JobManager said.
type JobView struct {
	Ref JobRef
	// Cluster is the hash of the cluster the job was started on.
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
func (v *JobView) State() string {
	if v.Details == nil {
		return ""
	}
	return v.Details.State
}

// answered is the job's reference when its JobManager answered about it, so that Flink can be
// asked for its checkpoints; nil when it did not (gone, or no such job there).
func (v *JobView) answered() *JobRef {
	if v.Details == nil {
		return nil
	}
	return &v.Ref
}

// jobRef is the reference of a job on one of the application's clusters.
func (rc *Context) jobRef(hash, jobID string) JobRef {
	return JobRef{URL: rc.FlinkURL(hash), ID: jobID}
}

// JobView is the pass's view of a job on the cluster with this hash. The view of every job the
// application records is taken when the pass starts (observe); others are looked at on first use
// in the same way, and after an action on a job, forget makes the next look fresh.
func (rc *Context) JobView(hash, jobID string) *JobView {
	v, _ := rc.remember("view/"+hash+"/"+jobID, func() (interface{}, error) {
		view := &JobView{Ref: rc.jobRef(hash, jobID), Cluster: hash}
		if jobID == "" || hash == "" {
			view.Liveness, view.Evidence = Stopped, "no job is recorded"
			return view, nil
		}
		job, err := rc.Flink().GetJob(rc, view.Ref.URL, jobID)
		if err == nil {
			view.Details = job
		}
		view.Err = err
		view.Liveness, view.Evidence = judgeLiveness(rc.Clusters[hash], jobID, job, err)
		return view, nil
	})
	return v.(*JobView)
}

// observe takes the pass's view of Flink before any decision: the jobs of both deployment records
// (the stable one and the candidate). A job's checkpoints and the other jobs on a cluster (strays)
// are read, in the same view, when a decision needs them: checkpoints before a stop or a restore
// and when their record is due, strays before a submission. Calls to a JobManager that did not
// answer once fail fast for the rest of the pass.
func observe(rc *Context) {
	st := &rc.App.Status
	for _, r := range []*v1beta1.DeploymentRecord{stable(st), candidate(st)} {
		if r != nil && r.JobID != "" {
			rc.JobView(r.ClusterHash, r.JobID)
		}
	}
}

// breaker is the pass's Flink client: after a JobManager fails to answer once, its other calls in
// the same pass fail at once with that error, so one hung JobManager costs one timeout per pass.
type breaker struct {
	client.API
	open map[string]error
}

func newBreaker(api client.API) *breaker { return &breaker{API: api, open: map[string]error{}} }

func (b *breaker) guard(url string, call func() error) error {
	if err := b.open[url]; err != nil {
		return err
	}
	err := call()
	if client.IsNoAnswer(err) {
		b.open[url] = err
	}
	return err
}
