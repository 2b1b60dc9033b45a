package client

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
)

// Flink 2.3 puts every job in an application (FLIP-549). A job run from a jar is a
// SingleJobApplication whose id is the job's, so the id the operator chose names both; with HA a
// JobManager that takes over brings the application back. The operator asks for applications only
// to tell a job Flink brought back from one that is gone (jobs.View, the fence before a submission).

// Application states as Flink spells them (ApplicationState).
const (
	ApplicationCreated   = "CREATED"
	ApplicationRunning   = "RUNNING"
	ApplicationFailing   = "FAILING"
	ApplicationFailed    = "FAILED"
	ApplicationCanceling = "CANCELING"
	ApplicationCanceled  = "CANCELED"
	ApplicationFinished  = "FINISHED"
)

// IsTerminalApplication reports whether an application in this state can never change again.
func IsTerminalApplication(state string) bool {
	switch state {
	case ApplicationFinished, ApplicationCanceled, ApplicationFailed:
		return true
	}
	return false
}

// HasApplications tells whether a Flink release has applications: 2.3 and later (and an empty or
// unreadable version, a current release; it may be older, which answers the routes 404:
// IsRouteNotFound).
func HasApplications(version string) bool { return flinkAtLeast(version, 2, 3) }

// ApplicationSummary is one application of GET /applications/overview.
type ApplicationSummary struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
}

// Application is the body of GET /applications/:applicationid.
type Application struct {
	ID     string           `json:"id"`
	Name   string           `json:"name"`
	Status string           `json:"status"`
	Jobs   []ApplicationJob `json:"jobs"`
}

// ApplicationJob is a job of an application, as /jobs/overview lists it.
type ApplicationJob struct {
	ID    string `json:"jid"`
	Name  string `json:"name"`
	State string `json:"state"`
}

// singleJobApplication begins the name Flink gives the application of a job run from a jar
// (/jars/:jarid/run): it has no main() to run again, only that job, under the application's id.
const singleJobApplication = "SingleJobApplication("

// Over tells whether the application will run no job again, whatever its status says: it ended, or
// it is a SingleJobApplication whose job is globally terminal. Flink never runs a job id that has a
// result again, and 2.3.0 leaves the application of a run refused for a restore that cannot start
// RUNNING for good, with its job FAILED.
func (a *Application) Over() bool {
	if IsTerminalApplication(a.Status) {
		return true
	}
	if id, _ := a.LiveJob(); id != "" || !strings.HasPrefix(a.Name, singleJobApplication) {
		return false // a live job listed beside it is never taken for over (one Flink never lists)
	}
	for _, j := range a.Jobs {
		if strings.EqualFold(j.ID, a.ID) && IsGloballyTerminal(j.State) {
			return true
		}
	}
	return false
}

// LiveJob is the application's job in a state that is not globally terminal; "" when it has none.
func (a *Application) LiveJob() (id, state string) {
	for _, j := range a.Jobs {
		if !IsGloballyTerminal(j.State) {
			return j.ID, j.State
		}
	}
	return "", ""
}

// GetApplications implements API.
func (c *Client) GetApplications(ctx context.Context, baseURL string) (_ []ApplicationSummary, err error) {
	const op = "GetApplications"
	defer c.metrics.observe(op, time.Now(), &err)
	var out struct {
		Applications []ApplicationSummary `json:"applications"`
	}
	if err := c.getJSON(ctx, baseURL, op, &out, "applications", "overview"); err != nil {
		return nil, err
	}
	return out.Applications, nil
}

// GetApplication implements API.
func (c *Client) GetApplication(ctx context.Context, baseURL, applicationID string) (_ *Application, err error) {
	const op = "GetApplication"
	defer c.metrics.observe(op, time.Now(), &err)
	if err := requireID(op, "application id", applicationID); err != nil {
		return nil, err
	}
	var out Application
	if err := c.getJSON(ctx, baseURL, op, &out, "applications", applicationID); err != nil {
		return nil, err
	}
	return &out, nil
}

// applicationNotFound is the exception the Dispatcher answers an unknown application with. The
// details handler does not map it, so it comes as a 500 ("Internal server error.") naming the
// application.
const applicationNotFound = "FlinkApplicationNotFoundException"

// IsApplicationNotFound reports whether the JobManager itself answered that it does not know the
// application: a 500 or 404 whose message names FlinkApplicationNotFoundException and the id.
func IsApplicationNotFound(err error, applicationID string) bool {
	var e *Error
	return applicationID != "" && errors.As(err, &e) &&
		(e.StatusCode == http.StatusInternalServerError || e.StatusCode == http.StatusNotFound) &&
		strings.Contains(e.Message, applicationNotFound) && strings.Contains(e.Message, applicationID)
}

// IsRouteNotFound reports whether Flink answered that it has no such route: a release without the
// endpoint, such as one before 2.3 asked for applications. Its REST router answers {"errors":["Not
// found: <path>"]}; with the web UI, which the jar endpoints come with, a GET it has no route for
// reaches the UI's static file handler instead, which answers {"errors":["Unable to load requested
// file <path>."]} (StaticFileServerHandler). A 404 from anything in between says something else,
// and is not this.
func IsRouteNotFound(err error) bool {
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != http.StatusNotFound {
		return false
	}
	return strings.HasPrefix(e.Message, "Not found: /") || strings.HasPrefix(e.Message, "Unable to load requested file /")
}
