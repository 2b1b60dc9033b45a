package jobs

import (
	"context"
	"io"
	"sync"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// breaker is a pass's Flink client: after a JobManager fails to answer once, its other calls in
// the same pass fail at once with that error.
type breaker struct {
	client.API
	// mu guards open: the reads of Pass.Together share the breaker.
	mu   sync.Mutex
	open map[string]error
	// fence, when set, is asked before each call that changes something.
	fence func() error
}

func newBreaker(api client.API) *breaker { return &breaker{API: api, open: map[string]error{}} }

func (b *breaker) guard(url string, call func() error) error {
	if err := b.opened(url); err != nil {
		return err
	}
	return b.send(url, call)
}

// opened is the error that opened the breaker of a JobManager in this pass, if one did.
func (b *breaker) opened(url string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open[url]
}

// refuse makes every call to the JobManager at url fail at once with err for the rest of the pass,
// without being sent.
func (b *breaker) refuse(url string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open[url] == nil {
		b.open[url] = err
	}
}

// act is guard for a call that changes something: the fence is asked first.
func (b *breaker) act(url string, call func() error) error {
	if err := b.opened(url); err != nil {
		return err
	}
	if b.fence != nil {
		if err := b.fence(); err != nil {
			return Retryable("Fence", err)
		}
	}
	return b.send(url, call)
}

func (b *breaker) send(url string, call func() error) error {
	err := call()
	if client.IsNoAnswer(err) {
		b.mu.Lock()
		b.open[url] = err
		b.mu.Unlock()
	}
	return err
}

// The breaker's methods: each call goes through guard.

func (b *breaker) GetClusterOverview(ctx context.Context, url string) (out *client.ClusterOverview, err error) {
	err = b.guard(url, func() (e error) { out, e = b.API.GetClusterOverview(ctx, url); return })
	return
}

func (b *breaker) GetJobs(ctx context.Context, url string) (out []client.JobSummary, err error) {
	err = b.guard(url, func() (e error) { out, e = b.API.GetJobs(ctx, url); return })
	return
}

func (b *breaker) GetJob(ctx context.Context, url, jobID string) (out *client.JobDetails, err error) {
	err = b.guard(url, func() (e error) { out, e = b.API.GetJob(ctx, url, jobID); return })
	return
}

func (b *breaker) GetJobExceptions(ctx context.Context, url, jobID string) (out *client.JobExceptions, err error) {
	err = b.guard(url, func() (e error) { out, e = b.API.GetJobExceptions(ctx, url, jobID); return })
	return
}

func (b *breaker) GetCheckpoints(ctx context.Context, url, jobID string) (out *client.CheckpointStats, err error) {
	err = b.guard(url, func() (e error) { out, e = b.API.GetCheckpoints(ctx, url, jobID); return })
	return
}

func (b *breaker) GetTaskManagers(ctx context.Context, url string) (out []client.TaskManager, err error) {
	err = b.guard(url, func() (e error) { out, e = b.API.GetTaskManagers(ctx, url); return })
	return
}

func (b *breaker) TriggerSavepoint(ctx context.Context, url, jobID string, req client.SavepointRequest) (out string, err error) {
	err = b.act(url, func() (e error) { out, e = b.API.TriggerSavepoint(ctx, url, jobID, req); return })
	return
}

func (b *breaker) GetSavepointStatus(ctx context.Context, url, jobID, triggerID string) (out *client.SavepointStatus, err error) {
	err = b.guard(url, func() (e error) { out, e = b.API.GetSavepointStatus(ctx, url, jobID, triggerID); return })
	return
}

func (b *breaker) TriggerCheckpoint(ctx context.Context, url, jobID string, req client.CheckpointRequest) (out string, err error) {
	err = b.act(url, func() (e error) { out, e = b.API.TriggerCheckpoint(ctx, url, jobID, req); return })
	return
}

func (b *breaker) GetCheckpointStatus(ctx context.Context, url, jobID, triggerID string) (out *client.CheckpointStatus, err error) {
	err = b.guard(url, func() (e error) { out, e = b.API.GetCheckpointStatus(ctx, url, jobID, triggerID); return })
	return
}

func (b *breaker) GetCheckpointDetails(ctx context.Context, url, jobID string, checkpointID int64) (out *client.Checkpoint, err error) {
	err = b.guard(url, func() (e error) { out, e = b.API.GetCheckpointDetails(ctx, url, jobID, checkpointID); return })
	return
}

func (b *breaker) DisposeSavepoint(ctx context.Context, url, path string) error {
	return b.act(url, func() error { return b.API.DisposeSavepoint(ctx, url, path) })
}

func (b *breaker) CancelJob(ctx context.Context, url, jobID string) error {
	return b.act(url, func() error { return b.API.CancelJob(ctx, url, jobID) })
}

func (b *breaker) SubmitJob(ctx context.Context, url, jarID string, req client.SubmitJobRequest) (out string, err error) {
	err = b.act(url, func() (e error) { out, e = b.API.SubmitJob(ctx, url, jarID, req); return })
	return
}

func (b *breaker) UploadJar(ctx context.Context, url, name string, body io.Reader) (out string, err error) {
	err = b.act(url, func() (e error) { out, e = b.API.UploadJar(ctx, url, name, body); return })
	return
}

func (b *breaker) DeleteJar(ctx context.Context, url, jarID string) error {
	return b.act(url, func() error { return b.API.DeleteJar(ctx, url, jarID) })
}

func (b *breaker) GetJobResourceRequirements(ctx context.Context, url, jobID string) (out client.JobResourceRequirements, err error) {
	err = b.guard(url, func() (e error) { out, e = b.API.GetJobResourceRequirements(ctx, url, jobID); return })
	return
}

func (b *breaker) UpdateJobResourceRequirements(ctx context.Context, url, jobID string, req client.JobResourceRequirements) error {
	return b.act(url, func() error { return b.API.UpdateJobResourceRequirements(ctx, url, jobID, req) })
}

func (b *breaker) VertexMetricNames(ctx context.Context, url, jobID, vertexID string) (out []string, err error) {
	err = b.guard(url, func() (e error) { out, e = b.API.VertexMetricNames(ctx, url, jobID, vertexID); return })
	return
}

func (b *breaker) VertexMetrics(ctx context.Context, url, jobID, vertexID string, names []string) (out map[string]client.AggregatedMetric, err error) {
	err = b.guard(url, func() (e error) { out, e = b.API.VertexMetrics(ctx, url, jobID, vertexID, names); return })
	return
}

func (b *breaker) GetApplications(ctx context.Context, url string) (out []client.ApplicationSummary, err error) {
	err = b.guard(url, func() (e error) { out, e = b.API.GetApplications(ctx, url); return })
	return
}

func (b *breaker) GetApplication(ctx context.Context, url, applicationID string) (out *client.Application, err error) {
	err = b.guard(url, func() (e error) { out, e = b.API.GetApplication(ctx, url, applicationID); return })
	return
}
