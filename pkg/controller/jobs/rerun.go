package jobs

import (
	"fmt"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// From Flink 2.3 on every job belongs to an application, and a job the operator runs from a jar is
// an application of the job's own id. With HA a JobManager that takes over brings the application
// back: Flink 2.3 recovers its job under the same id (its Dispatcher, read at the release), but a
// re-run under another id, or an application whose main() runs again before its job is listed, is
// the same work going on. A JobManager that does not know the job is therefore positive evidence
// that the job stopped only when its application is also over, or unknown to it.

// weighApplication judges a job its JobManager does not know by its application: Unknown while the
// application runs (Rerun names the job it runs instead, if any), Stopped when it ended or the
// JobManager does not know it either.
//
// The application is the one the job's record names (Ref.Application) when Flink ran it again under
// this job's id: asked by the job's own id, the JobManager answers that it knows no such application
// while the application runs on (explorer seed 11000453: the job a rerun ran under was taken for
// gone, and the job submitted again beside the next rerun).
func (p *Pass) weighApplication(view *View) {
	id := view.Ref.ID
	appID := ApplicationOf(view.Ref)
	app, err := p.flink.GetApplication(p.ctx, view.Ref.URL, appID)
	switch {
	case client.IsApplicationNotFound(err, appID), client.IsRouteNotFound(err):
		// Neither the job nor its application: the job stopped, as before applications.
	case err != nil:
		view.Liveness = Unknown
		view.Evidence = fmt.Sprintf("the JobManager does not know job %s, and the state of its application is unknown: %v", id, err)
	case app.Over():
		view.Evidence += fmt.Sprintf(", and its application is %s and runs nothing more", app.Status)
	default:
		view.Liveness = Unknown
		rerun, state := app.LiveJob()
		if rerun == "" || rerun == id {
			view.Evidence = fmt.Sprintf("the JobManager does not know job %s, but its application is %s: Flink may be running it again", id, app.Status)
			return
		}
		view.Rerun = rerun
		view.Evidence = fmt.Sprintf("Flink runs job %s's application again as job %s (%s)", id, rerun, state)
	}
}

// ApplicationOf is the application a job runs in: the one its record names, or the job's own id.
func ApplicationOf(ref Ref) string {
	if ref.Application != "" {
		return ref.Application
	}
	return ref.ID
}

// Applications is GET /applications/overview of a cluster (2.3+).
func (p *Pass) Applications(cluster string) ([]client.ApplicationSummary, error) {
	v, err := p.remember("applications/"+cluster, func() (interface{}, error) {
		return p.flink.GetApplications(p.ctx, p.URL(cluster))
	})
	if err != nil {
		return nil, err
	}
	return v.([]client.ApplicationSummary), nil
}

// fenceApplications looks at the cluster's applications before a submission (2.3+). An
// application of this owner's that runs is this owner's job going on, whatever id its job has now:
// its live job is adopted, and while it has none (its main() runs again) nothing is submitted. A
// cluster that cannot list its applications blocks the submission, as one that cannot list its
// jobs does; a release without applications answers the route 404 and has none to fence.
func (p *Pass) fenceApplications(o Owner, job *Job) *Wait {
	ref := p.Ref(job.Cluster, job.ID)
	if !client.HasApplications(ref.FlinkVersion) {
		return nil
	}
	apps, err := p.Applications(job.Cluster)
	switch {
	case client.IsRouteNotFound(err):
		return nil
	case err != nil:
		return retry(Retryable("ListApplications", err))
	}
	for _, a := range apps {
		if client.IsTerminalApplication(a.Status) || !o.Started(a.ID) || contains(o.Beside, a.ID) {
			continue
		}
		app, err := p.flink.GetApplication(p.ctx, ref.URL, a.ID)
		switch {
		case client.IsApplicationNotFound(err, a.ID):
			continue // it ended and left since the listing
		case err != nil:
			return retry(Retryable("GetApplication", err))
		case app.Over():
			continue // whatever its status: a run refused at its restore leaves one RUNNING for good
		}
		if id, state := app.LiveJob(); id != "" && !contains(o.Beside, id) {
			p.announce(false, "JobAdopted", fmt.Sprintf("job %s of this object's application %s is %s on its cluster; following it instead of submitting another",
				id, a.ID, state))
			job.ID, job.SubmittedAt, job.Application = id, time.Time{}, a.ID
			if a.ID == id {
				job.Application = ""
			}
			return persist()
		}
		return retry(Retryable("SubmitJob", fmt.Errorf("application %s of this object is %s on its cluster without a running job "+
			"(Flink may be running it again); not submitting beside it", a.ID, app.Status)))
	}
	return nil
}
