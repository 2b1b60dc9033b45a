package flinksim

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// Flink 2.3's applications, as its Dispatcher and handlers at the release-2.3 commit behave.

// A job run from a jar on 2.3 is its own SingleJobApplication: the answer, the job and the
// application name one id, and the application ends as its job does.
func TestAJobRunFromAJarIsAnApplicationOfItsOwnId(t *testing.T) {
	h := newHarness(t, Options{FlinkVersion: "2.3"})
	status, m := h.post("/jars/"+jar+"/run", map[string]any{})
	if status != http.StatusOK || m["applicationId"] != m["jobid"] {
		t.Fatalf("run: %d %v", status, m)
	}
	id := m["jobid"].(string)
	h.step(time.Second)
	if got := h.mustGet("/jobs/" + id)["application-id"]; got != id {
		t.Fatalf("application-id %v, want %s", got, id)
	}
	app := h.mustGet("/applications/" + id)
	if app["status"] != "RUNNING" || app["name"] != "SingleJobApplication(Flink Streaming Job)" || at(app, "jobs", 0, "jid") != id {
		t.Fatalf("application %v", app)
	}
	h.call("PATCH", "/jobs/"+id, nil)
	h.step(time.Second)
	if got := h.mustGet("/applications/" + id)["status"]; got != "CANCELED" {
		t.Fatalf("application of a cancelled job is %v", got)
	}
	overview := at(h.mustGet("/applications/overview"), "applications", 0)
	if at(overview, "id") != id || at(overview, "status") != "CANCELED" || num(at(overview, "jobs", "CANCELED")) != 1 {
		t.Fatalf("overview %v", overview)
	}
}

// A job id already taken is refused as an application already submitted on 2.3, and as a job
// already submitted before.
func TestASecondSubmissionUnderOneIdIsRefusedAsAnApplicationOn23(t *testing.T) {
	for version, want := range map[string]string{
		"2.2": "DuplicateJobSubmissionException: Job has already been submitted.",
		"2.3": "DuplicateApplicationSubmissionException: Application has already been submitted.",
	} {
		t.Run(version, func(t *testing.T) {
			h := newHarness(t, Options{FlinkVersion: version})
			id := h.runToRunning(nil)
			for _, state := range []string{"running", "cancelled"} {
				status, m := h.post("/jars/"+jar+"/run", map[string]any{"jobId": id})
				if status != http.StatusBadRequest || !strings.Contains(errorText(m), want) {
					t.Fatalf("second submission of a %s job: %d %s", state, status, errorText(m))
				}
				h.call("PATCH", "/jobs/"+id, nil)
				h.step(time.Second)
			}
		})
	}
}

// A failed job's cause is in its application's exception history, and the application fails with it.
func TestAFailedJobsCauseIsItsApplicationsException(t *testing.T) {
	h := newHarness(t, Options{FlinkVersion: "2.3"})
	h.jm.SetFaults(Faults{FailJobsAfter: time.Second})
	id := h.runToRunning(nil)
	h.step(3 * time.Second)
	app := h.mustGet("/applications/" + id)
	entry := at(h.mustGet("/applications/"+id+"/exceptions"), "exceptionHistory", "entries", 0)
	if app["status"] != "FAILED" || at(entry, "jobId") != id {
		t.Fatalf("application %v, exception %v", app, entry)
	}
}

// As on real 2.3, a run refused because its restore cannot start lists its job FAILED in an
// application that stays RUNNING for good.
func TestTheApplicationOfARefusedRunStaysRunning(t *testing.T) {
	h := newHarness(t, Options{FlinkVersion: "2.3"})
	id := h.runRefused(map[string]any{"savepointPath": "s3://missing/savepoint-1"})
	h.step(time.Minute)
	app := h.mustGet("/applications/" + id)
	if app["status"] != "RUNNING" || at(app, "jobs", 0, "jid") != id || at(app, "jobs", 0, "state") != "FAILED" {
		t.Fatalf("application %v", app)
	}
}

// An unknown application is the Dispatcher's unmapped FlinkApplicationNotFoundException (500);
// cancelling one is a 404; a release before 2.3 has no such routes.
func TestUnknownApplications(t *testing.T) {
	h := newHarness(t, Options{FlinkVersion: "2.3"})
	unknown := strings.Repeat("ab", 16)
	if status, m := h.get("/applications/" + unknown); status != http.StatusInternalServerError ||
		!strings.Contains(errorText(m), "FlinkApplicationNotFoundException: Could not find Flink application ("+unknown+")") {
		t.Fatalf("unknown application: %d %v", status, m)
	}
	if status, m := h.post("/applications/"+unknown+"/cancel", nil); status != http.StatusNotFound ||
		!strings.Contains(errorText(m), "Application could not be found.") {
		t.Fatalf("cancel of an unknown application: %d %v", status, m)
	}
	old := newHarness(t, Options{FlinkVersion: "2.2"})
	if status, m := old.get("/applications/overview"); status != http.StatusNotFound || errorText(m) != "Unable to load requested file /applications/overview." {
		t.Fatalf("2.2: %d %v", status, m)
	}
}

// run-application starts a PackagedProgramApplication at once; its job takes the request's id, and
// the application follows the job unless execution.terminate-application-on-any-job-terminated-
// exceptionally is false, when it finishes as main() returns.
func TestRunApplication(t *testing.T) {
	h := newHarness(t, Options{FlinkVersion: "2.3"})
	jobID := strings.Repeat("1f", 16)
	status, m := h.post("/jars/"+jar+"/run-application", map[string]any{"jobId": jobID, "entryClass": "org.example.Job"})
	if status != http.StatusAccepted || m["applicationid"] == nil {
		t.Fatalf("run-application: %d %v", status, m)
	}
	app := m["applicationid"].(string)
	h.step(time.Second)
	details := h.mustGet("/applications/" + app)
	if details["name"] != "org.example.Job" || details["status"] != "RUNNING" || at(details, "jobs", 0, "jid") != jobID {
		t.Fatalf("application %v", details)
	}
	if status, _ := h.post("/applications/"+app+"/cancel", nil); status != http.StatusAccepted {
		t.Fatalf("cancel: %d", status)
	}
	h.step(time.Second)
	if got := h.mustGet("/applications/" + app)["status"]; got != "CANCELED" || h.state(jobID) != "CANCELED" {
		t.Fatalf("cancelled application %v, job %s", got, h.state(jobID))
	}

	status, m = h.post("/jars/"+jar+"/run-application", map[string]any{
		"flinkConfiguration": map[string]string{terminateOnJobFailureKey: "false"}})
	if status != http.StatusAccepted {
		t.Fatalf("run-application: %d %v", status, m)
	}
	h.step(time.Second)
	decoupled := h.mustGet("/applications/" + m["applicationid"].(string))
	if decoupled["status"] != "FINISHED" || at(decoupled, "jobs", 0, "state") != "RUNNING" {
		t.Fatalf("a decoupled application whose main() returned: %v", decoupled)
	}
}

// With HA a JobManager that takes over recovers a job under its own id, in an application of that
// id, and re-runs an unfinished PackagedProgramApplication, whose job is listed again only once
// its main() has run (Faults.RerunTakes).
func TestHARecoversJobsUnderTheirOwnIdsAndRerunsApplications(t *testing.T) {
	h := newHarness(t, Options{FlinkVersion: "2.3", FlinkConfig: haConfig()})
	single := h.runToRunning(nil)
	_, m := h.post("/jars/"+jar+"/run-application", map[string]any{})
	app := m["applicationid"].(string)
	h.step(time.Second)
	h.jm.SetFaults(Faults{RerunTakes: 5 * time.Second})
	h.jm.Restart()
	h.step(time.Second)

	if got := h.mustGet("/applications/" + app); got["status"] != "RUNNING" || len(got["jobs"].([]any)) != 0 {
		t.Fatalf("re-run application before its main() submitted: %v", got)
	}
	if status, _ := h.get("/jobs/" + app); status != http.StatusNotFound {
		t.Fatalf("the re-run application's job before main() submitted it: %d", status)
	}
	if got := h.mustGet("/jobs/" + single); got["state"] == "INITIALIZING" && got["application-id"] != nil {
		// Until it has an execution graph, a job's details are of the sparse one, which has none.
		t.Fatalf("job %s initializing with an application id: %v", single, got["application-id"])
	}
	h.step(5 * time.Second)
	if h.mustGet("/jobs/" + single)["application-id"] != single {
		t.Fatalf("job %s not recovered in its own application", single)
	}
	if got := h.mustGet("/applications/" + app); at(got, "jobs", 0, "jid") != app {
		t.Fatalf("re-run application's job (HA fixes its id to the application's): %v", got)
	}
}

// Faults.RerunUnderNewJobID: the other way Flink could go. The recovered job runs under a new id
// in its old application, whose id stays taken.
func TestRerunUnderANewJobIDKeepsTheApplication(t *testing.T) {
	tl := NewTimeline()
	h := newHarness(t, Options{FlinkVersion: "2.3", FlinkConfig: haConfig(), Timeline: tl, AppKey: "ns/app"})
	id := h.runToRunning(nil)
	h.step(10*time.Second + 200*time.Millisecond) // chk-1
	h.jm.SetFaults(Faults{RerunUnderNewJobID: true})
	h.jm.Crash()
	h.step(time.Second)

	if status, _ := h.get("/jobs/" + id); status != http.StatusNotFound {
		t.Fatalf("the old job id after a re-run: %d", status)
	}
	jobs := at(h.mustGet("/applications/"+id), "jobs").([]any)
	if len(jobs) != 1 || at(jobs, 0, "jid") == id || at(jobs, 0, "state") != "RUNNING" {
		t.Fatalf("application %s after the re-run: %v", id, jobs)
	}
	rerun := at(jobs, 0, "jid").(string)
	if got := at(h.mustGet("/jobs/"+rerun+"/checkpoints"), "latest", "restored", "external_path"); got != ckpDir+"/"+id+"/chk-1" {
		t.Fatalf("the re-run job restored %v", got)
	}
	if status, m := h.post("/jars/"+jar+"/run", map[string]any{"jobId": id}); status != http.StatusBadRequest ||
		!strings.Contains(errorText(m), "DuplicateApplicationSubmissionException") {
		t.Fatalf("the old id submitted again: %d %v", status, m)
	}
	if overlaps := tl.Overlaps("ns/app"); len(overlaps) != 0 {
		t.Fatalf("overlaps %+v", overlaps)
	}
}

// The operator's client tells a release without applications from an application the JobManager
// does not know, by Flink's own answers: the one is no evidence about a job, the other is.
func TestTheClientTellsNoApplicationsFromAnUnknownOne(t *testing.T) {
	ctx := context.Background()
	c := client.New(client.DefaultConfig(), nil)
	unknown := strings.Repeat("ab", 16)

	old := newHarness(t, Options{FlinkVersion: "2.2"})
	_, err := c.GetApplications(ctx, old.srv.URL)
	if !client.IsRouteNotFound(err) {
		t.Fatalf("2.2's answer to GET /applications/overview: %v", err)
	}
	_, err = c.GetApplication(ctx, old.srv.URL, unknown)
	if !client.IsRouteNotFound(err) || client.IsApplicationNotFound(err, unknown) {
		t.Fatalf("2.2's answer to GET /applications/:id: %v", err)
	}

	h := newHarness(t, Options{FlinkVersion: "2.3"})
	_, err = c.GetApplication(ctx, h.srv.URL, unknown)
	if !client.IsApplicationNotFound(err, unknown) || client.IsRouteNotFound(err) {
		t.Fatalf("2.3's answer about an unknown application: %v", err)
	}
	id := h.runToRunning(nil)
	app, err := c.GetApplication(ctx, h.srv.URL, id)
	if err != nil {
		t.Fatal(err)
	}
	if live, state := app.LiveJob(); app.Status != client.ApplicationRunning || live != id || state != "RUNNING" {
		t.Fatalf("application %+v", app)
	}
	apps, err := c.GetApplications(ctx, h.srv.URL)
	if err != nil || len(apps) != 1 || apps[0].ID != id || apps[0].Status != client.ApplicationRunning {
		t.Fatalf("applications %+v, %v", apps, err)
	}
}
