package client

import (
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
)

const (
	uploadRoute = "POST /jars/upload"
	// What Flink 1.20 answers an upload: the jar's path in its web upload directory.
	uploadOKBody = `{"filename":"/tmp/flink-web-3c1d1f0e-8b1f-4a4e-9c55-4bd0c7b0a111/flink-web-upload/` + testJarID + `","status":"success"}`
	// What Flink answers an upload of a file whose name does not end in .jar.
	uploadNotAJarBody = `{"errors":["org.apache.flink.runtime.rest.handler.RestHandlerException: Only Jar files are allowed.\n\tat org.apache.flink.runtime.webmonitor.handlers.JarUploadHandler.handleRequest(JarUploadHandler.java:82)\n"]}`
	// What Flink answers a DELETE of a jar it does not have.
	deleteMissingJarBody = `{"errors":["org.apache.flink.runtime.rest.handler.RestHandlerException: File ` + testJarID +
		` does not exist in /tmp/flink-web-3c1d1f0e-8b1f-4a4e-9c55-4bd0c7b0a111/flink-web-upload.\n\tat org.apache.flink.runtime.webmonitor.handlers.JarDeleteHandler.lambda$handleRequest$0(JarDeleteHandler.java:80)\n"]}`
)

// A jar uploaded through the client is listed, runs, and is gone once deleted, on the simulator
// that answers as Flink 1.20 does.
func TestUploadRunAndDeleteJarOnTheSimulator(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	jm := flinksim.NewJobManager(flinksim.Options{Clock: clk, Jars: []string{"baked.jar"}})
	srv := httptest.NewServer(jm.Handler())
	t.Cleanup(srv.Close)
	c := newTestClient(DefaultConfig())

	id, err := c.UploadJar(ctx, srv.URL, "wordcount.jar", strings.NewReader("PK\x03\x04"))
	require.NoError(t, err)
	assert.Regexp(t, `^[0-9a-f-]{36}_wordcount\.jar$`, id)

	jobID, err := c.SubmitJob(ctx, srv.URL, id, SubmitJobRequest{Parallelism: 1})
	require.NoError(t, err)
	assert.NotEmpty(t, jobID)

	require.NoError(t, c.DeleteJar(ctx, srv.URL, id))
	err = c.DeleteJar(ctx, srv.URL, id)
	require.Error(t, err)
	assert.True(t, IsJarNotFound(err), "a second delete: %v", err)
	assert.False(t, IsRetryable(err))

	_, err = c.SubmitJob(ctx, srv.URL, id, SubmitJobRequest{})
	require.Error(t, err, "the deleted jar still runs")
}

func TestUploadJarSendsTheJarAsMultipart(t *testing.T) {
	fake, srv := newFakeJobManager(t, "/ns/app", map[string][]reply{uploadRoute: {{status: 200, body: uploadOKBody}}})
	id, err := newTestClient(DefaultConfig()).UploadJar(context.Background(), srv.URL+"/ns/app", "wordcount.jar", strings.NewReader("jar bytes"))
	require.NoError(t, err)
	assert.Equal(t, testJarID, id)

	req := fake.last()
	assert.Equal(t, "/ns/app/jars/upload", req.path)
	mediaType, params, err := mime.ParseMediaType(req.contentType)
	require.NoError(t, err)
	assert.Equal(t, "multipart/form-data", mediaType)
	part, err := multipart.NewReader(strings.NewReader(req.body), params["boundary"]).NextPart()
	require.NoError(t, err)
	assert.Equal(t, "jarfile", part.FormName())
	assert.Equal(t, "wordcount.jar", part.FileName())
	assert.Equal(t, jarContentType, part.Header.Get("Content-Type"))
	content, _ := io.ReadAll(part)
	assert.Equal(t, "jar bytes", string(content))
}

func TestUploadJarErrors(t *testing.T) {
	tests := []struct {
		name          string
		jar           string
		body          io.Reader
		reply         reply
		wantStatus    int
		wantRetryable bool
		wantMessage   string
	}{
		{name: "not a jar", jar: "job.zip", reply: reply{status: 400, body: uploadNotAJarBody}, wantStatus: 400,
			wantMessage: "Only Jar files are allowed."},
		{name: "leader election is retryable", jar: "job.jar", reply: reply{status: 503, body: leaderElectionBody},
			wantStatus: 503, wantRetryable: true},
		{name: "timeout is retryable: a second upload only leaves an orphan", jar: "job.jar",
			reply: reply{status: 200, body: uploadOKBody, delay: 2 * time.Second}, wantRetryable: true, wantMessage: "no answer within 50ms"},
		{name: "answer without a filename", jar: "job.jar", reply: reply{status: 200, body: `{"status":"success"}`},
			wantStatus: 200, wantMessage: "no uploaded filename"},
		{name: "empty name", jar: "", reply: reply{status: 200, body: uploadOKBody}, wantMessage: "jar name must not be empty"},
		{name: "name with a path", jar: "lib/job.jar", reply: reply{status: 200, body: uploadOKBody}, wantMessage: "must not contain a path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := newFakeJobManager(t, "", map[string][]reply{uploadRoute: {tt.reply}})
			id, err := newTestClient(Config{SubmitTimeout: 50 * time.Millisecond}).
				UploadJar(context.Background(), srv.URL, tt.jar, strings.NewReader("PK"))
			require.Error(t, err)
			assert.Empty(t, id)
			var e *Error
			require.True(t, errors.As(err, &e), "want *Error, got %T", err)
			assert.Equal(t, "UploadJar", e.Method)
			assert.Equal(t, tt.wantStatus, e.StatusCode)
			assert.Equal(t, tt.wantRetryable, IsRetryable(err))
			assert.Contains(t, e.Message, tt.wantMessage)
		})
	}
}

func TestDeleteJar(t *testing.T) {
	route := "DELETE /jars/" + testJarID
	fake, srv := newFakeJobManager(t, "", map[string][]reply{route: {{status: 200, body: `{}`}, {status: 400, body: deleteMissingJarBody}}})
	c := newTestClient(DefaultConfig())
	ctx := context.Background()

	require.NoError(t, c.DeleteJar(ctx, srv.URL, testJarID))
	assert.Equal(t, "DELETE", fake.last().method)
	assert.Equal(t, "/jars/"+testJarID, fake.last().path)

	err := c.DeleteJar(ctx, srv.URL, testJarID)
	require.Error(t, err)
	assert.True(t, IsJarNotFound(err))
	assert.False(t, IsRetryable(err))
	assert.Contains(t, err.Error(), "does not exist in")

	err = c.DeleteJar(ctx, srv.URL, " ")
	require.Error(t, err)
	assert.False(t, IsJarNotFound(err))
	assert.Len(t, fake.received(), 2, "an empty id must not be sent")
}

func TestJarMetricsPerEndpoint(t *testing.T) {
	_, srv := newFakeJobManager(t, "", map[string][]reply{
		uploadRoute:                 {{status: 200, body: uploadOKBody}},
		"DELETE /jars/" + testJarID: {{status: 400, body: deleteMissingJarBody}},
	})
	reg := prometheus.NewRegistry()
	c := New(DefaultConfig(), reg)
	ctx := context.Background()
	_, err := c.UploadJar(ctx, srv.URL, "job.jar", strings.NewReader("PK"))
	require.NoError(t, err)
	require.Error(t, c.DeleteJar(ctx, srv.URL, testJarID))

	assert.Equal(t, 1.0, counterValue(t, reg, requestsMetric, map[string]string{"operation": "UploadJar"}))
	assert.Equal(t, 0.0, counterValue(t, reg, errorsMetric, map[string]string{"operation": "UploadJar"}))
	assert.Equal(t, 1.0, counterValue(t, reg, errorsMetric, map[string]string{"operation": "DeleteJar", "reason": "400"}))
}
