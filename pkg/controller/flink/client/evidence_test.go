package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
)

// TestEvidenceAboutAJobComesOnlyFromFlinkItself checks the classifiers the operator's liveness
// rests on: a 404 is evidence only when it names the job, and a request without an answer is never
// a refusal.
func TestEvidenceAboutAJobComesOnlyFromFlinkItself(t *testing.T) {
	const jobID = "3f2a1b4c5d6e7f8091a2b3c4d5e6f708"
	cases := []struct {
		name                       string
		status                     int
		body                       string
		jobNotFound, noAnswer, dup bool
	}{
		{"Flink does not know the job", 404, jobNotFoundBody, true, false, false},
		{"a proxy's 404 for a missing Service", 404,
			`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"services \"wc-abc\" not found","reason":"NotFound","code":404}`,
			false, false, false},
		{"a proxy's 502", 502, "Bad Gateway", false, true, false},
		{"a duplicate job id", 400, submitDuplicateBody, false, false, true},
		{"a duplicate job id on Flink 2.3, which names it a duplicate application", 400, submitDuplicateApplicationBody, false, false, true},
		{"a duplicate job id on Flink 2.3, refused as its application", 400,
			strings.Replace(submitDuplicateBody, "DuplicateJobSubmissionException: Job has already been submitted.",
				"DuplicateApplicationSubmissionException: Application has already been submitted.", 1), false, false, true},
		// A JobManager with the web UI answers a GET it has no route for through its static file
		// handler, naming the path, and so the job: a base URL off by a prefix, or a route the release
		// lacks, says nothing of the job.
		{"the web UI's static file handler naming the job's path", 404,
			`{"errors":["Unable to load requested file /jobs/` + jobID + `."]}`, false, false, false},
		{"the REST router's unknown route naming the job's path", 404,
			`{"errors":["Not found: /v1/jobs/` + jobID + `"]}`, false, false, false},
		{"a leader election", 503, `{"errors":["Service temporarily unavailable due to an ongoing leader election. Please refresh."]}`, false, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(c.status)
				_, _ = w.Write([]byte(c.body))
			}))
			defer srv.Close()
			cl := New(DefaultConfig(), prometheus.NewRegistry())
			_, err := cl.GetJob(context.Background(), srv.URL, jobID)
			if c.dup {
				_, err = cl.SubmitJob(context.Background(), srv.URL, "wc.jar", SubmitJobRequest{JobID: jobID})
			}
			assert.Equal(t, c.jobNotFound, IsJobNotFound(err, jobID), "job not found")
			assert.Equal(t, c.noAnswer, IsNoAnswer(err), "no answer")
			assert.Equal(t, c.dup, IsDuplicateSubmission(err), "duplicate")
		})
	}
}

func TestASubmissionThatGetsNoAnswerIsNoRefusal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(300 * time.Millisecond)
	}))
	defer srv.Close()
	cfg := DefaultConfig()
	cfg.SubmitTimeout = 50 * time.Millisecond
	_, err := New(cfg, prometheus.NewRegistry()).SubmitJob(context.Background(), srv.URL, "wc.jar", SubmitJobRequest{})
	assert.True(t, IsNoAnswer(err))
	assert.False(t, IsDuplicateSubmission(err))

	_, err = New(cfg, prometheus.NewRegistry()).GetJob(context.Background(), "not a url", "x")
	assert.False(t, IsNoAnswer(err), "a request never sent is not ambiguous")
}
