package client

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// boundsOf is what the worst-answer tests need to know of a call's bounds: its byte cap, how many
// values an answer of n bytes may hold, and what the budget counts for such an answer.
func boundsOf(op string) (int64, func(n int64) int, func(n int64) uint64) {
	lim := limitFor(op, http.StatusOK)
	values := func(n int64) int { return lim.valuesFor(int(n)) }
	cost := func(n int64) uint64 { return uint64(answerCost(lim, min(n, lim.bytes))) }
	return lim.bytes, values, cost
}

func TestEveryCallHasAnAnswerLimitWithinTheBudget(t *testing.T) {
	api := reflect.TypeOf((*API)(nil)).Elem()
	for i := range api.NumMethod() {
		op := api.Method(i).Name
		lim, ok := answerLimits[op]
		if assert.True(t, ok, "%s has no answer limit", op) {
			assert.NotEmpty(t, lim.route, op)
			assert.LessOrEqual(t, bodyCopies*lim.bytes+int64(lim.values)*valueCost, int64(answerBudget),
				"%s: its costliest answer does not fit the budget, so it would always read alone", op)
		}
	}
	assert.Len(t, answerLimits, api.NumMethod(), "a limit for a call API does not have")
	assert.LessOrEqual(t, answerCost(errorAnswer, errorAnswer.bytes), int64(answerBudget))
}

// serve answers every request with status and body.
func serve(t *testing.T, status int, body []byte, header ...string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A refused answer is an answer: not a 404 about the job, not a missing answer, and not worth
// asking again. Liveness (jobs.Judge) therefore stays Unknown and never becomes Stopped.
func TestARefusedAnswerIsNoEvidenceAboutTheJob(t *testing.T) {
	flood := []byte(`{"jid":"` + testJobID + `","state":"FAILED","vertices":[` + strings.Repeat("{},", 100_000) + `{}]}`)
	for name, body := range map[string][]byte{
		"too many values": flood,
		"too long":        append(flood, bytes.Repeat([]byte(" "), 5<<20)...),
	} {
		t.Run(name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			job, err := New(DefaultConfig(), reg).GetJob(context.Background(), serve(t, http.StatusOK, body), testJobID)
			require.Error(t, err)
			assert.Nil(t, job, "nothing of a refused answer is returned, its FAILED state included")
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, http.StatusOK, e.StatusCode)
			assert.ErrorIs(t, err, errRefused)
			assert.False(t, IsJobNotFound(err, testJobID), "a refused answer says nothing of the job")
			assert.False(t, IsNotFound(err))
			assert.False(t, IsNoAnswer(err), "it is an answer, and the request was not lost")
			assert.False(t, IsRetryable(err), "the JobManager answers the same again")
			assert.Contains(t, e.Error(), "GET /jobs/:jobid")
			assert.Equal(t, 1.0, counterValue(t, reg, errorsMetric, map[string]string{"operation": "GetJob", "reason": reasonDecode}))
		})
	}
}

// Each bound that refuses an answer says which it is, with its number, and where it was crossed.
func TestARefusalNamesTheEndpointAndTheBound(t *testing.T) {
	deep := strings.Repeat("[", 40) + strings.Repeat("]", 40)
	dense := []byte(`{"vertices":[` + strings.Repeat("{},", 1000) + `{}]}`)
	denseLimit := answerLimits["GetJob"].valuesFor(len(dense))
	tests := []struct {
		name    string
		body    []byte
		chunked bool
		want    []string
	}{
		{"a length over the cap", bytes.Repeat([]byte(" "), 4<<20+1), false,
			[]string{"GET /jobs/:jobid", "answer refused", "4194305 bytes", "4194304 allowed"}},
		{"a chunked body over the cap", bytes.Repeat([]byte(" "), 4<<20+1), true,
			[]string{"GET /jobs/:jobid", "longer than the 4194304 bytes allowed"}},
		{"too many values", []byte(`{"vertices":[{"tasks":{` + strings.Repeat(`"RUNNING":1,`, 60_000) + `"x":1}}]}`), false,
			[]string{"GET /jobs/:jobid", "more than 49152 values", "at .vertices[0].tasks"}},
		{"too many values for its size", dense, false,
			[]string{fmt.Sprintf("more than %d values", denseLimit), fmt.Sprintf("at .vertices[%d]", denseLimit-1)}},
		{"too deep", []byte(`{"plan":` + deep + `}`), false,
			[]string{"nests arrays and objects deeper than 32", "at .plan[0][0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if !tt.chunked {
					w.Header().Set("Content-Length", strconv.Itoa(len(tt.body)))
				}
				_, _ = w.Write(tt.body)
			}))
			defer srv.Close()
			_, err := newTestClient(DefaultConfig()).GetJob(context.Background(), srv.URL, testJobID)
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// Real answers at generous scale are read: a cap that refused them would leave the operator blind.
func TestAnswersAtGenerousScaleAreRead(t *testing.T) {
	vertex := `{"id":"cbc357ccb763df2852fee8c4fc7d55f2","slotSharingGroupId":"a9f1e2d3c4b5a69788796a5b4c3d2e1f",
"name":"Calc(select=[a, b, c]) -> ` + strings.Repeat("x", 100) + `","maxParallelism":128,"parallelism":4,"status":"RUNNING",
"start-time":1700000000600,"end-time":-1,"duration":11745,
"tasks":{"CREATED":0,"SCHEDULED":0,"DEPLOYING":0,"RUNNING":4,"FINISHED":0,"CANCELING":0,"CANCELED":0,"FAILED":0,"RECONCILING":0,"INITIALIZING":0},
"metrics":{"read-bytes":0,"read-bytes-complete":true,"write-bytes":1024,"write-bytes-complete":true,"read-records":0,
"read-records-complete":true,"write-records":10,"write-records-complete":true,"accumulated-backpressured-time":0,
"accumulated-idle-time":11000,"accumulated-busy-time":0.0}}`
	node := `{"id":"cbc357ccb763df2852fee8c4fc7d55f2","parallelism":4,"operator":"","operator_strategy":"",
"description":"` + strings.Repeat("Calc(select=[a, b, c], where=[(a > 10)]) ", 25) + `",
"inputs":[{"num":0,"id":"90bea66de1c231edf33913ecd54406c1","ship_strategy":"HASH","exchange":"pipelined_bounded"}],"optimizer_properties":{}}`
	job := `{"jid":"` + testJobID + `","name":"big","state":"RUNNING","vertices":[` + repeatJoined(vertex, 500) +
		`],"plan":{"jid":"` + testJobID + `","name":"big","type":"STREAMING","nodes":[` + repeatJoined(node, 500) + `]}}`
	jobs := `{"jobs":[` + repeatJoined(`{"id":"`+testJobID+`","status":"FINISHED"}`, 10_000) + `]}`
	trace := `java.lang.RuntimeException: boom\n` + strings.Repeat(`\tat org.apache.flink.streaming.runtime.tasks.StreamTask.invoke(StreamTask.java:1234)\n`, 100)
	failure := `{"exceptionName":"java.lang.RuntimeException","stacktrace":"` + trace + `","timestamp":1700000005000,
"taskName":"Flat Map (2/4)","endpoint":"10.0.0.5:6121","taskManagerId":"tm-1","failureLabels":{"type":"user"}}`
	entry := strings.TrimSuffix(failure, "}") + `,"concurrentExceptions":[` + repeatJoined(failure, 10) + `]}`
	exceptions := `{"exceptionHistory":{"entries":[` + repeatJoined(entry, 16) + `],"truncated":false}}`
	tm := taskManagersBody[len(`{"taskmanagers":[`) : len(taskManagersBody)-len(`]}`)]
	tms := `{"taskmanagers":[` + repeatJoined(tm, 1000) + `]}`
	history := checkpointsBody[strings.Index(checkpointsBody, `"history":[`)+len(`"history":[`) : len(checkpointsBody)-len(`]}`)]
	checkpoints := checkpointsBody[:strings.Index(checkpointsBody, `"history":[`)] + `"history":[` + repeatJoined(history, 50) + `]}`
	var reqs strings.Builder
	reqs.WriteString("{")
	for i := range 1000 {
		fmt.Fprintf(&reqs, `%s"%032x":{"parallelism":{"lowerBound":1,"upperBound":4}}`, map[bool]string{true: ",", false: ""}[i > 0], i)
	}
	reqs.WriteString("}")

	ctx := context.Background()
	c := newTestClient(DefaultConfig())
	for name, tc := range map[string]struct {
		body string
		call func(url string) (int, error)
	}{
		"a job of 500 vertices": {job, func(url string) (int, error) {
			j, err := c.GetJob(ctx, url, testJobID)
			if err != nil {
				return 0, err
			}
			return len(j.Vertices), nil
		}},
		"10,000 jobs": {jobs, func(url string) (int, error) { j, err := c.GetJobs(ctx, url); return len(j), err }},
		"16 failures of 11 tasks": {exceptions, func(url string) (int, error) {
			e, err := c.GetJobExceptions(ctx, url, testJobID)
			if err != nil {
				return 0, err
			}
			return len(e.ExceptionHistory.Entries), nil
		}},
		"1,000 TaskManagers": {tms, func(url string) (int, error) { tm, err := c.GetTaskManagers(ctx, url); return len(tm), err }},
		"a history of 100 checkpoints": {checkpoints, func(url string) (int, error) {
			s, err := c.GetCheckpoints(ctx, url, testJobID)
			if err != nil {
				return 0, err
			}
			return len(s.History), nil
		}},
		"1,000 vertices' requirements": {reqs.String(), func(url string) (int, error) {
			r, err := c.GetJobResourceRequirements(ctx, url, testJobID)
			return len(r), err
		}},
	} {
		t.Run(name, func(t *testing.T) {
			require.True(t, json.Valid([]byte(tc.body)))
			n, err := tc.call(serve(t, http.StatusOK, []byte(tc.body)))
			require.NoError(t, err, "%d bytes", len(tc.body))
			assert.Positive(t, n)
			t.Logf("%d bytes", len(tc.body))
		})
	}
}

func repeatJoined(s string, n int) string {
	return strings.TrimSuffix(strings.Repeat(s+",", n), ",")
}

// An error answer is never refused: its status is the answer, and its first bytes say why.
func TestAnOutsizedErrorAnswerKeepsItsStatus(t *testing.T) {
	pad := strings.Repeat(`\tat org.example.Deep.frame(Deep.java:1)\n`, 100_000)
	notFound := `{"errors":["org.apache.flink.runtime.rest.NotFoundException: Job ` + testJobID + ` not found\n` + pad + `"]}`
	_, err := newTestClient(DefaultConfig()).GetJob(context.Background(), serve(t, http.StatusNotFound, []byte(notFound)), testJobID)
	require.Error(t, err)
	assert.True(t, IsNotFound(err))
	assert.True(t, IsRetryable(err), "as any 404 to a read")
	assert.Contains(t, err.Error(), "HTTP 404")
	assert.LessOrEqual(t, len(err.(*Error).Message), maxExcerpt+3)

	failed := `{"errors":["Internal server error.","<Exception on server side:\norg.apache.flink.client.program.ProgramInvocationException: main failed\n` + pad + `"]}`
	_, err = newTestClient(DefaultConfig()).SubmitJob(context.Background(), serve(t, http.StatusInternalServerError, []byte(failed)), testJarID, SubmitJobRequest{})
	require.Error(t, err)
	assert.False(t, IsRetryable(err), "the marker in its first bytes still makes the failure final")
	assert.False(t, IsNoAnswer(err))
}

// Calls that read only the status succeed whatever follows it: the cap only stops the reading.
func TestAStatusOnlyCallIgnoresWhatLiesBeyondItsCap(t *testing.T) {
	url := serve(t, http.StatusAccepted, append([]byte(`{"x":[`), bytes.Repeat([]byte("{},"), 1<<20)...))
	assert.NoError(t, newTestClient(DefaultConfig()).CancelJob(context.Background(), url, testJobID))
}

// An answer compressed without being asked is refused by what it inflates to, before it is all
// inflated.
func TestACompressedAnswerIsBoundedByWhatItInflatesTo(t *testing.T) {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write([]byte(`{"vertices":[`))
	for range 1 << 20 {
		_, _ = zw.Write([]byte("{},{},{},{},"))
	}
	_, _ = zw.Write([]byte(`{}]}`))
	require.NoError(t, zw.Close())
	require.Less(t, zipped.Len(), 64<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(zipped.Bytes())
	}))
	defer srv.Close()
	// The Accept-Encoding the client sets keeps the transport from inflating it on its own.
	c := newTestClient(DefaultConfig())
	c.http.SetHeader("Accept-Encoding", "gzip")
	_, err := c.GetJob(context.Background(), srv.URL, testJobID)
	require.Error(t, err)
	assert.ErrorIs(t, err, errRefused)
	assert.Contains(t, err.Error(), "longer than the 4194304 bytes allowed")
}

// When answers in flight hold the whole budget, a call waits, within its own timeout, and then
// fails as one without an answer: the request went out, so a submission may have happened.
func TestACallWaitsForRoomInTheBudget(t *testing.T) {
	require.True(t, inFlight.TryAcquire(answerBudget), "another test holds budget")
	held := true
	defer func() {
		if held {
			inFlight.Release(answerBudget)
		}
	}()
	url := serve(t, http.StatusOK, []byte(submitOKBody), "Content-Length", strconv.Itoa(len(submitOKBody)))
	c := newTestClient(Config{SubmitTimeout: 100 * time.Millisecond, GetTimeout: 100 * time.Millisecond})

	_, err := c.SubmitJob(context.Background(), url, testJarID, SubmitJobRequest{})
	require.Error(t, err)
	assert.ErrorIs(t, err, errNoRoom)
	assert.True(t, IsNoAnswer(err), "a submission that was sent may have happened")
	assert.False(t, IsRetryable(err))
	assert.Contains(t, err.Error(), "no answer within 100ms")
	_, err = c.GetJobs(context.Background(), url)
	assert.True(t, IsRetryable(err), "a read is tried again later")
	assert.False(t, IsJobNotFound(err, testJobID))

	done := make(chan error, 1)
	slow := newTestClient(Config{SubmitTimeout: 10 * time.Second})
	go func() {
		_, err := slow.SubmitJob(context.Background(), url, testJarID, SubmitJobRequest{})
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	inFlight.Release(answerBudget)
	held = false
	require.NoError(t, <-done, "once the budget has room the waiting call goes on")
	require.True(t, inFlight.TryAcquire(answerBudget), "every call gave its share back")
	inFlight.Release(answerBudget)
}

// Turning a huge answer into a message reads no more of it than the message needs.
func TestTextFromAHugeAnswerCostsLittle(t *testing.T) {
	huge := strings.Repeat("\n", 8<<20) + "java.lang.RuntimeException: boom\n" + strings.Repeat("Caused by: java.io.IOException: disk full\n\tat a.b(C.java:1)\n", 1<<18)
	body := []byte(`{"errors":["Internal server error.","` + strings.ReplaceAll(huge, "\n", `\n`)[:errorAnswer.bytes-40] + `"]}`)
	words := bytes.Repeat([]byte("a "), 8<<20)
	var got [4]string
	allocated := allocatedBy(func() {
		got[0] = summarizeTrace(huge)
		got[1] = Excerpt(huge)
		got[2] = errorMessage(http.StatusInternalServerError, words)
		got[3] = bodyExcerpt(words, maxRawMessage)
	})
	assert.Less(t, allocated, uint64(1<<20), "%d bytes allocated", allocated)
	assert.Equal(t, "java.lang.RuntimeException: boom (caused by java.io.IOException: disk full)", got[0])
	assert.True(t, strings.HasPrefix(got[1], "java.lang.RuntimeException: boom Caused by: java.io.IOException: disk full at a.b(C.java:1)"), got[1])
	assert.Len(t, got[1], maxExcerpt+3)
	assert.Len(t, got[2], maxRawMessage+3)
	assert.Equal(t, got[2], got[3])
	assert.NotEmpty(t, errorMessage(http.StatusInternalServerError, body))
}

// allocatedBy reports the bytes f allocates.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestCheckShape(t *testing.T) {
	tests := []struct {
		body          string
		values, depth int
	}{
		{`{}`, 0, 1},
		{`[]`, 0, 1},
		{`"x"`, 0, 0},
		{`{"a":1}`, 1, 1},
		{`[1,2,3]`, 3, 1},
		{`[[],[[]],{}]`, 4, 3},
		{`{"a":[1,{"b":"]},[{"}]}`, 4, 3},
		{`{"a\"":"\\","b":["\"[",{}]}`, 4, 3},
		{" { \"a\" : [ 1 , 2 ] , \"b\" : { } } ", 4, 2},
		{`{"vertices":[{"tasks":{"RUNNING":1,"FINISHED":0}},{}]}`, 6, 4},
	}
	for _, tt := range tests {
		require.True(t, json.Valid([]byte(tt.body)), tt.body)
		assert.Equal(t, tt.values, referenceValues(t, tt.body), "the reference: %s", tt.body)
		assert.Empty(t, checkShape([]byte(tt.body), tt.values, tt.depth), tt.body)
		if tt.values > 0 {
			assert.Contains(t, checkShape([]byte(tt.body), tt.values-1, maxNesting), "more than", tt.body)
		}
		if tt.depth > 0 {
			assert.Contains(t, checkShape([]byte(tt.body), tt.values, tt.depth-1), "deeper than", tt.body)
		}
	}
	body := []byte(jobDetailsBody)
	assert.Zero(t, testing.AllocsPerRun(10, func() { checkShape(body, 1000, maxNesting) }), "the walk allocates nothing")
}

// FuzzCheckShapeCountsWhatTheDecoderDoes: for any JSON, the walk counts the values encoding/json's
// own tokenizer sees.
func FuzzCheckShapeCountsWhatTheDecoderDoes(f *testing.F) {
	for _, seed := range []string{jobDetailsBody, exceptionsBody, checkpointsBody, `[{"a":"\"]"},[]]`, `{"":{"":[1,true,null]}}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if !json.Valid([]byte(body)) {
			return
		}
		n := referenceValues(t, body)
		if why := checkShape([]byte(body), n, maxNesting); why != "" && !strings.Contains(why, "deeper") {
			t.Fatalf("%q: %d values counted as more: %s", body, n, why)
		}
		if n > 0 && !strings.Contains(checkShape([]byte(body), n-1, maxNesting), "more than") {
			t.Fatalf("%q: %d values counted as fewer", body, n)
		}
	})
}

// referenceValues counts array elements and object members with encoding/json's tokenizer.
func referenceValues(t *testing.T, body string) int {
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber() // numbers stay text: 7E2345 is valid JSON, if no float64
	type level struct{ object, wantKey bool }
	var open []level
	n := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return n
		}
		require.NoError(t, err)
		if d, ok := tok.(json.Delim); ok && (d == ']' || d == '}') {
			open = open[:len(open)-1]
			continue
		}
		if len(open) > 0 {
			top := &open[len(open)-1]
			switch {
			case !top.object:
				n++
			case top.wantKey:
				n++
				top.wantKey = false
				continue
			default:
				top.wantKey = true
			}
		}
		if d, ok := tok.(json.Delim); ok {
			open = append(open, level{object: d == '{', wantKey: d == '{'})
		}
	}
}
