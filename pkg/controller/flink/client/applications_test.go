package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
)

// A release before 2.3 has no application routes, which its JobManager says in one of two ways:
// the REST router's "Not found", or, with the web UI, the static file handler's. Both are Flink's
// own word that there are no applications; a proxy's 404 is not, and neither is an unknown
// application, which 2.3 answers with a 500 naming it.
func TestTheClientTellsARouteFlinkLacksFromOtherAnswers(t *testing.T) {
	const id = "3f2a1b4c5d6e7f8091a2b3c4d5e6f708"
	cases := []struct {
		name               string
		status             int
		body               string
		noRoute, noSuchApp bool
	}{
		{"the REST router", 404, `{"errors":["Not found: /applications/` + id + `"]}`, true, false},
		{"the web UI's static file handler", 404, `{"errors":["Unable to load requested file /applications/` + id + `."]}`, true, false},
		{"a proxy's 404", 404, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"the server could not find the requested resource","code":404}`, false, false},
		{"2.3, an unknown application", 500, `{"errors":["Internal server error.","<Exception on server side:\njava.util.concurrent.CompletionException: ` +
			`org.apache.flink.runtime.messages.FlinkApplicationNotFoundException: Could not find Flink application (` + id + `)\n\tat x\nEnd of exception on server side>"]}`, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(c.status)
				_, _ = w.Write([]byte(c.body))
			}))
			defer srv.Close()
			_, err := New(DefaultConfig(), prometheus.NewRegistry()).GetApplication(context.Background(), srv.URL, id)
			assert.Equal(t, c.noRoute, IsRouteNotFound(err), "no such route: %v", err)
			assert.Equal(t, c.noSuchApp, IsApplicationNotFound(err, id), "no such application: %v", err)
		})
	}
}

// An application runs nothing more once it ended, or, whatever its status, once it is a
// SingleJobApplication whose job is globally terminal; an application of a program's main() may
// run it again, and is over only when it ended.
func TestAnApplicationIsOverWhenItCanRunNoJobAgain(t *testing.T) {
	id := "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name string
		app  Application
		over bool
	}{
		{"ended", Application{ID: id, Name: "SingleJobApplication(wc)", Status: ApplicationCanceled}, true},
		{"refused at its restore", Application{ID: id, Name: "SingleJobApplication(wc)", Status: ApplicationRunning,
			Jobs: []ApplicationJob{{ID: id, State: JobFailed}}}, true},
		{"its job runs", Application{ID: id, Name: "SingleJobApplication(wc)", Status: ApplicationRunning,
			Jobs: []ApplicationJob{{ID: id, State: JobRunning}}}, false},
		{"no job listed yet", Application{ID: id, Name: "SingleJobApplication(wc)", Status: ApplicationRunning}, false},
		{"its job failed, another of it runs", Application{ID: id, Name: "SingleJobApplication(wc)", Status: ApplicationRunning,
			Jobs: []ApplicationJob{{ID: id, State: JobFailed}, {ID: "fedcba9876543210fedcba9876543210", State: JobRunning}}}, false},
		{"a program's, its first job failed", Application{ID: id, Name: "PackagedProgramApplication(wc)", Status: ApplicationRunning,
			Jobs: []ApplicationJob{{ID: id, State: JobFailed}}}, false},
	} {
		if got := tc.app.Over(); got != tc.over {
			t.Errorf("%s: Over() = %v", tc.name, got)
		}
	}
}
