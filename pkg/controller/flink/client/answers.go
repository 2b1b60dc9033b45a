package client

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// What one JobManager answer may cost.
//
// A JobManager runs the tenant's image, so an answer can be built to hurt: 16 MiB of
// {"vertices":[{},{},...]} decodes into 5.6 million structs, about 1.7 GiB, and kills the operator
// for every tenant. Three bounds keep one answer, and all of them together, small:
//
//   - each call has a byte cap fitted to what Flink really answers it (answerLimits);
//   - before decoding, checkShape walks the body and refuses it when it holds more values (array
//     elements and object members) than the call allows, more than one per bytesPerValue bytes, or
//     nests deeper than maxNesting. Decoding then allocates at most valueCost bytes per value;
//   - every answer holds a share of one process-wide budget (inFlight) from before its body is
//     read until it is decoded, sized by answerCost, so 32 workers reading large answers at once
//     wait for each other instead of adding up.

// answerLimit is what one call's successful answer may be.
type answerLimit struct {
	// route names the endpoint in errors, as Flink's REST documentation spells it.
	route string
	// bytes caps the body. An answer of exactly bytes is read; one byte more is refused.
	bytes int64
	// values caps the array elements and object members of the whole answer, nested ones
	// included. Zero means the call reads only the status: its body is not decoded, and what
	// lies beyond bytes is left unread instead of refused.
	values int
}

// The caps, from what Flink 1.20 answers at generous scale (REST.md §5 gives the shapes), with
// room above it: two to three times for the large answers, more for the small ones. A cap that
// refused a real answer would leave the operator blind to that job, which is the worse failure.
var answerLimits = map[string]answerLimit{
	// About 300 bytes and 11 members, whatever the cluster's size.
	"GetClusterOverview": {route: "GET /overview", bytes: 16 << 10, values: 512},
	// 55 bytes and 3 values per job; a session cluster lists terminal jobs for an hour, so 10,000
	// short jobs (550 KiB, 30,000 values) is a busy one.
	"GetJobs": {route: "GET /jobs", bytes: 1 << 20, values: 32 << 10},
	// Per vertex about 0.8 KiB and 33 values in "vertices" (tasks and metrics maps included) and
	// 0.3 KiB plus its description and about 16 values in "plan"; SQL descriptions run to a KiB
	// or more, and 2.x adds a stream graph of the operators. 500 vertices with 1 KiB descriptions
	// are about 1.3 MiB and 25,000 values, about twice that on 2.x.
	"GetJob": {route: "GET /jobs/:jobid", bytes: 4 << 20, values: 48 << 10},
	// Flink keeps 16 failures (web.exception-history-size), each with its stack trace (5–20 KiB)
	// and those of the tasks that failed with it: 16 failures of 10 tasks with 10 KiB traces
	// are 1.7 MiB, in about 2,000 values.
	"GetJobExceptions": {route: "GET /jobs/:jobid/exceptions", bytes: 2 << 20, values: 16 << 10},
	// Summary, the latest four and a history of 10 (web.checkpoints.history), about 0.7 KiB and
	// 25 values each, with per-task statistics empty here: about 12 KiB. A history raised to 100
	// with long failure messages stays under 300 KiB.
	"GetCheckpoints": {route: "GET /jobs/:jobid/checkpoints", bytes: 1 << 20, values: 16 << 10},
	// About 1.1 KiB and 38 values per TaskManager: 1,000 TaskManagers are 1.1 MiB, 38,000 values.
	"GetTaskManagers": {route: "GET /taskmanagers", bytes: 2 << 20, values: 48 << 10},
	// A location, or a failure cause whose stack trace and Java-serialised copy (base64) can
	// reach tens of KiB.
	"GetSavepointStatus": {route: "GET /jobs/:jobid/savepoints/:triggerid", bytes: 1 << 20, values: 256},
	// {"request-id":...}, {"jobid":...}, {"filename":...,"status":"success"}: under 300 bytes.
	"TriggerSavepoint":  {route: "POST /jobs/:jobid/savepoints", bytes: 16 << 10, values: 64},
	"TriggerCheckpoint": {route: "POST /jobs/:jobid/checkpoints", bytes: 16 << 10, values: 64},
	// A checkpoint id, or a failure cause as a savepoint's.
	"GetCheckpointStatus": {route: "GET /jobs/:jobid/checkpoints/:triggerid", bytes: 1 << 20, values: 256},
	// One checkpoint's statistics with its tasks, about 0.3 KiB and 12 values per vertex.
	"GetCheckpointDetails": {route: "GET /jobs/:jobid/checkpoints/details/:checkpointid", bytes: 1 << 20, values: 16 << 10},
	"SubmitJob":            {route: "POST /jars/:jarid/run", bytes: 16 << 10, values: 64},
	"UploadJar":            {route: "POST /jars/upload", bytes: 16 << 10, values: 64},
	// About 75 bytes and 4 values per vertex: 1,000 vertices are 75 KiB.
	"GetJobResourceRequirements": {route: "GET /jobs/:jobid/resource-requirements", bytes: 256 << 10, values: 16 << 10},
	// The metrics of one vertex's subtasks: about 40 of each task and each operator of the
	// vertex's chain, and a Kafka source's consumer metrics and offsets per partition, about 90
	// bytes and 2 values each. A chain of 20 operators reading 1,000 partitions lists about
	// 5,000 names, 450 KiB.
	"VertexMetricNames": {route: "GET /jobs/:jobid/vertices/:vertexid/subtasks/metrics", bytes: 2 << 20, values: 48 << 10},
	// At most 64 metrics named in 3 KiB, each with 4 aggregations: under 12 KiB and 400 values.
	"VertexMetrics": {route: "GET /jobs/:jobid/vertices/:vertexid/subtasks/metrics", bytes: 64 << 10, values: 2 << 10},
	// About 200 bytes and 10 values per application (2.3); a session cluster lists ended ones for
	// an hour, as its jobs: 6,000 short jobs an hour are 1.2 MiB and 60,000 values. Only a
	// submission reads it, which waits while it is refused.
	"GetApplications": {route: "GET /applications/overview", bytes: 2 << 20, values: 64 << 10},
	// An application with its jobs as /jobs/overview lists them, about 0.4 KiB and 25 values each;
	// the operator's have one, a batch application thousands.
	"GetApplication": {route: "GET /applications/:applicationid", bytes: 2 << 20, values: 64 << 10},
	// Answered {} or {"request-id":...}, and only their status is read.
	"CancelJob":                     {route: "PATCH /jobs/:jobid", bytes: 16 << 10},
	"DisposeSavepoint":              {route: "POST /savepoint-disposal", bytes: 16 << 10},
	"DeleteJar":                     {route: "DELETE /jars/:jarid", bytes: 16 << 10},
	"UpdateJobResourceRequirements": {route: "PUT /jobs/:jobid/resource-requirements", bytes: 16 << 10},
}

// errorAnswer bounds every error answer (a status outside 2xx). Flink's is {"errors":[...]}
// with one or two stack traces, a few KiB and at most a few dozen KiB for a long cause chain.
// Only its first bytes are read: the status is the answer, and they name the exception. It is
// never refused, so an outsized one still counts as the error its status says.
var errorAnswer = answerLimit{route: "error answer", bytes: 256 << 10, values: 1024}

// fallbackLimit covers a call missing from answerLimits, so that no call is unbounded; a test
// keeps every method of API in the table.
var fallbackLimit = answerLimit{route: "answer", bytes: 16 << 10, values: 64}

const (
	// bytesPerValue: an answer may hold at most one value per this many bytes (plus
	// slackValues). Flink's densest answers, the counts maps of /jobs/:jobid ("CREATED":0,), take
	// 12 bytes per value; an array of empty objects takes 3. This is what keeps a small answer's
	// decoding cheap, and so its share of the budget small.
	bytesPerValue = 8
	slackValues   = 64
	// maxNesting bounds arrays and objects inside each other. Flink's answers nest 6 deep.
	maxNesting = 32
	// valueCost bounds what decoding one value allocates: the largest element the client
	// decodes (ExceptionHistoryEntry, 136 bytes), and the copies a growing slice leaves behind
	// until the next collection (measured: 65,528 TaskManagers of 112 bytes take 20 MiB). A
	// map entry costs less.
	valueCost = 320
	// bodyCopies: the body is read into a buffer that may grow by doubling, and decoded strings
	// are copies of it, escaped ones through one more buffer.
	bodyCopies = 4
	// answerBudget is what all answers being read and decoded may cost at once, in the whole
	// process. The costliest single answer (GetJob's) fits it; typical answers of a few KiB take
	// a few hundred KiB of it, so a full set of workers reads them without waiting.
	answerBudget = 32 << 20
)

// inFlight is the process-wide budget: every client shares it, since they share the memory.
var inFlight = newBudget(answerBudget)

// limitFor gives the bounds of op's answer with the given status.
func limitFor(op string, status int) answerLimit {
	lim, ok := answerLimits[op]
	if !ok {
		lim = fallbackLimit
	}
	if status < 200 || status > 299 {
		route := lim.route
		lim = errorAnswer
		lim.route = route
	}
	return lim
}

// valuesFor is how many values an answer of n bytes may hold.
func (l answerLimit) valuesFor(n int) int {
	return min(l.values, n/bytesPerValue+slackValues)
}

// answerCost bounds the memory that reading and decoding an answer of at most n bytes takes.
func answerCost(l answerLimit, n int64) int64 {
	values := l.valuesFor(int(min(n, l.bytes)))
	return min(bodyCopies*n+int64(values)*valueCost, answerBudget)
}

// errRefused marks an answer the client would not decode; it wraps errDecode, so metrics count it
// as "decode".
var errRefused = errors.New("answer refused")

// refused reports a successful answer that is too large or too intricate to decode. It is not
// retryable (the JobManager would answer the same), and it keeps the answer's status: it is an
// answer, so it is neither "no answer" nor, whatever its status, a 404 about a job.
func refused(op string, lim answerLimit, status int, why string) *Error {
	return &Error{
		Method:     op,
		StatusCode: status,
		Message:    fmt.Sprintf("%s: %v: %s", lim.route, errRefused, why),
		Cause:      fmt.Errorf("%w: %w: %s", errDecode, errRefused, why),
	}
}

// errNoRoom marks an answer left unread because the budget stayed full for the whole call.
var errNoRoom = errors.New("no room in the budget for JobManager answers")

// received is an answer's body, holding its share of the budget until release.
type received struct {
	body    []byte
	weight  int64
	limit   answerLimit
	refusal *Error
	// pooled is body's buffer when it came from answerBuffers, to go back there by recycle.
	pooled *[]byte
}

// answerBuffers keeps buffers for the answers that are decoded and dropped, nearly all of them
// polls: at 10,000 applications a new buffer per answer was a ninth of what the operator allocated.
var answerBuffers = sync.Pool{New: func() any { b := make([]byte, 0, pooledAnswerSize); return &b }}

// pooledAnswerSize is the size of answerBuffers' buffers; a longer answer gets its own.
const pooledAnswerSize = 16 << 10

// recycle hands the body's buffer back for another answer; nothing may read the body after it.
func (r *received) recycle() {
	if r.pooled != nil && cap(r.body) == pooledAnswerSize {
		*r.pooled = r.body[:0]
		answerBuffers.Put(r.pooled)
	}
	r.pooled, r.body = nil, nil
}

func (r *received) release() {
	if r.weight > 0 {
		inFlight.Release(r.weight)
		r.weight = 0
	}
}

// receive reads resp's body within its limit and the budget. A body larger than the limit is
// refused when op decodes it and cut at the limit otherwise. Failing to read, or to get room
// before ctx ends, is returned as an error without an answer: the request may have been acted on.
func receive(ctx context.Context, op string, resp *http.Response, reuse bool) (*received, error) {
	lim := limitFor(op, resp.StatusCode)
	decoded := lim.values > 0 && resp.StatusCode >= 200 && resp.StatusCode <= 299
	var body io.Reader = resp.Body
	size := resp.ContentLength
	if strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") && size != 0 {
		// The transport decompresses what it asked compressed; an answer compressed unasked is
		// decompressed here, as resty does. The cap then applies to what it inflates to.
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		body, size = zr, -1
	}
	if decoded && size > lim.bytes {
		return &received{limit: lim, refusal: refused(op, lim, resp.StatusCode,
			fmt.Sprintf("its %d bytes are more than the %d allowed", size, lim.bytes))}, nil
	}
	want := lim.bytes
	if size >= 0 && size < want {
		want = size
	}
	r := &received{limit: lim, weight: answerCost(lim, want)}
	if err := inFlight.Acquire(ctx, r.weight); err != nil {
		r.weight = 0
		return nil, fmt.Errorf("%w (%d MiB): %w", errNoRoom, answerBudget>>20, err)
	}
	var into *[]byte
	if reuse && want < pooledAnswerSize {
		into = answerBuffers.Get().(*[]byte)
	}
	buf, over, err := readAtMost(body, want, size >= 0, into)
	if err != nil {
		r.release()
		if into != nil {
			answerBuffers.Put(into)
		}
		return nil, err
	}
	r.body, r.pooled = buf, into
	if over && decoded {
		r.release()
		r.body = nil
		r.refusal = refused(op, lim, resp.StatusCode, fmt.Sprintf("it is longer than the %d bytes allowed", lim.bytes))
	}
	return r, nil
}

// readAtMost reads up to n bytes of r and reports whether more followed. When exact is set, r
// holds exactly n bytes (a known Content-Length), so the buffer is allocated once. into, when
// set, is an empty buffer of more than n bytes to read into instead of a new one.
func readAtMost(r io.Reader, n int64, exact bool, into *[]byte) ([]byte, bool, error) {
	if exact {
		var buf []byte
		if into != nil {
			buf = (*into)[:n]
		} else {
			buf = make([]byte, n)
		}
		_, err := io.ReadFull(r, buf)
		return buf, false, err
	}
	// Without a length the buffer doubles as it fills, never past n+1 bytes.
	var buf []byte
	if into != nil {
		buf = *into
	} else {
		buf = make([]byte, 0, min(n+1, 32<<10))
	}
	for {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(2*int64(cap(buf)), n+1))
			copy(grown, buf)
			buf = grown
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		// Checked before EOF: a reader may hand over its last bytes with EOF.
		if int64(len(buf)) > n {
			return buf[:n], true, nil
		}
		if errors.Is(err, io.EOF) {
			return buf, false, nil
		}
		if err != nil {
			return nil, false, err
		}
	}
}
