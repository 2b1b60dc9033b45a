package client

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/internal/heapwatch"
)

// The worst answers a JobManager can send, to every call that reads one, through a real server
// and the real client. The operator runs with a 512 Mi memory limit and up to 32 workers; one answer
// must not cost more than a small part of that, nor all of them together.

// heapCeiling is what the live heap may reach while the client reads the worst answers.
const heapCeiling = 64 << 20

// requestCost is what a request takes whatever its answer (connection, headers, the client's and
// the server's bookkeeping), on top of what the budget counts for the answer.
const requestCost = 1 << 20

// oldCap is the client's former only bound: 16 MiB of body, whatever the call.
const oldCap = 16 << 20

// unit appends the i-th repeated piece of a worst answer to dst.
type unit func(dst []byte, i int) []byte

func emptyObject(dst []byte, _ int) []byte { return append(dst, "{}"...) }
func emptyString(dst []byte, _ int) []byte { return append(dst, `""`...) }
func letter(dst []byte, _ int) []byte      { return append(dst, 'x') }
func escapedLine(dst []byte, _ int) []byte { return append(dst, `\n`...) }
func word(dst []byte, _ int) []byte        { return append(dst, 'a') }
func intEntry(dst []byte, i int) []byte {
	return append(strconv.AppendInt(append(dst, `"k`...), int64(i), 10), `":0`...)
}
func strEntry(dst []byte, i int) []byte {
	return append(strconv.AppendInt(append(dst, `"k`...), int64(i), 10), `":""`...)
}
func objEntry(dst []byte, i int) []byte {
	return append(strconv.AppendInt(append(dst, `"k`...), int64(i), 10), `":{}`...)
}

// placement is where a call's answer carries the repeated pieces: head, the pieces joined by sep,
// white space up to the answer's size, tail.
type placement struct {
	name       string
	head, tail string
	sep        string
	unit       unit
	constant   bool // unit appends the same piece whatever its index
}

// valued reports whether each piece is one JSON value, so that an answer can hold just as many
// as the client admits.
func (p placement) valued() bool { return p.sep == "," }

func arrayOf(name, head, tail string) placement {
	return placement{name: name, head: head, tail: tail, sep: ",", unit: emptyObject, constant: true}
}

func mapOf(name, head, tail string, u unit) placement {
	return placement{name: name, head: head, tail: tail, sep: ",", unit: u}
}

func stringOf(name, head, tail string, u unit) placement {
	return placement{name: name, head: head, tail: tail, unit: u, constant: true}
}

// answer is one worst answer: a placement (or a nesting, when deep is set) filled to size bytes.
type answer struct {
	status  int
	place   placement
	deep    string // "[" or "{": arrays or objects nested as deep as size allows
	size    int64
	pieces  int  // at most this many pieces when positive
	chunked bool // sent without a Content-Length
}

// write streams the answer, exactly a.size bytes, without holding it in memory.
func (a answer) write(w *bufio.Writer) {
	if a.deep != "" {
		open, inner, close := "[", "", "]"
		if a.deep == "{" {
			open, inner, close = `{"a":`, "0", "}"
		}
		d := (a.size - int64(len(inner))) / int64(len(open)+len(close))
		for range d {
			if _, err := w.WriteString(open); err != nil {
				return
			}
		}
		w.WriteString(inner)
		for range d {
			if _, err := w.WriteString(close); err != nil {
				return
			}
		}
		writeSpaces(w, a.size-d*int64(len(open)+len(close))-int64(len(inner)))
		return
	}
	p := a.place
	w.WriteString(p.head)
	left := a.size - int64(len(p.head)+len(p.tail))
	var piece []byte
	i := 0
	if p.constant {
		// The same piece again and again: written a block at a time, which keeps the server
		// fast enough for 32 clients.
		piece = p.unit(piece, 0)
		block := []byte(strings.Repeat(p.sep+string(piece), (32<<10)/(len(p.sep)+len(piece))))
		left -= int64(len(piece))
		if left < 0 {
			return
		}
		w.Write(piece)
		for i = 1; left >= int64(len(block)) && (a.pieces <= 0 || i+len(block)/(len(p.sep)+len(piece)) <= a.pieces); i += len(block) / (len(p.sep) + len(piece)) {
			if _, err := w.Write(block); err != nil {
				return
			}
			left -= int64(len(block))
		}
	}
	for ; a.pieces <= 0 || i < a.pieces; i++ {
		piece = p.unit(piece[:0], i)
		need := int64(len(piece))
		if i > 0 {
			need += int64(len(p.sep))
		}
		if need > left {
			break
		}
		if i > 0 {
			w.WriteString(p.sep)
		}
		if _, err := w.Write(piece); err != nil {
			return // the client hung up: it has read all it wanted
		}
		left -= need
	}
	writeSpaces(w, left)
	w.WriteString(p.tail)
}

var spaces = []byte(strings.Repeat(" ", 32<<10))

func writeSpaces(w *bufio.Writer, n int64) {
	for n > 0 {
		k := min(n, int64(len(spaces)))
		if _, err := w.Write(spaces[:k]); err != nil {
			return
		}
		n -= k
	}
}

// worstServer answers a request below /case/<n>/ with answers[n].
type worstServer struct {
	answers []answer
	srv     *httptest.Server
}

func newWorstServer(t *testing.T, answers []answer) *worstServer {
	ws := &worstServer{answers: answers}
	ws.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		rest, _ := strings.CutPrefix(r.URL.Path, "/case/")
		n, err := strconv.Atoi(rest[:max(strings.IndexByte(rest, '/'), 0)])
		if err != nil || n < 0 || n >= len(ws.answers) {
			http.Error(w, "no such case", http.StatusTeapot)
			return
		}
		a := ws.answers[n]
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		if !a.chunked {
			w.Header().Set("Content-Length", strconv.FormatInt(a.size, 10))
		}
		w.WriteHeader(a.status)
		bw := bufio.NewWriterSize(w, 32<<10)
		a.write(bw)
		_ = bw.Flush()
	}))
	t.Cleanup(ws.srv.Close)
	return ws
}

func (ws *worstServer) url(n int) string { return ws.srv.URL + "/case/" + strconv.Itoa(n) }

// readCall is one client method that reads an answer, with where its worst answers put their
// weight: the arrays and maps it decodes, fields it ignores, and its strings.
type readCall struct {
	op     string
	call   func(ctx context.Context, c *Client, url string) error
	places []placement
}

var anyField = arrayOf("an ignored array of empty objects", `{"x":[`, `]}`)

var readCalls = []readCall{
	{"GetJob", func(ctx context.Context, c *Client, url string) error {
		_, err := c.GetJob(ctx, url, testJobID)
		return err
	}, []placement{
		arrayOf("vertices of empty objects", `{"vertices":[`, `]}`),
		mapOf("a huge timestamps map", `{"timestamps":{`, `}}`, intEntry),
		mapOf("a huge tasks map", `{"vertices":[{"tasks":{`, `}}]}`, intEntry),
		arrayOf("plan nodes (ignored)", `{"plan":{"nodes":[`, `]}}`),
		stringOf("a long name", `{"name":"`, `"}`, letter),
		stringOf("a name of escapes", `{"name":"`, `"}`, escapedLine),
	}},
	{"GetJobs", func(ctx context.Context, c *Client, url string) error {
		_, err := c.GetJobs(ctx, url)
		return err
	}, []placement{
		arrayOf("jobs of empty objects", `{"jobs":[`, `]}`),
		stringOf("a long id", `{"jobs":[{"id":"`, `"}]}`, letter),
	}},
	{"GetClusterOverview", func(ctx context.Context, c *Client, url string) error {
		_, err := c.GetClusterOverview(ctx, url)
		return err
	}, []placement{anyField, stringOf("a long version", `{"flink-version":"`, `"}`, letter)}},
	{"GetJobExceptions", func(ctx context.Context, c *Client, url string) error {
		_, err := c.GetJobExceptions(ctx, url, testJobID)
		return err
	}, []placement{
		arrayOf("history entries of empty objects", `{"exceptionHistory":{"entries":[`, `]}}`),
		arrayOf("concurrent exceptions of empty objects", `{"exceptionHistory":{"entries":[{"concurrentExceptions":[`, `]}]}}`),
		mapOf("huge failure labels", `{"exceptionHistory":{"entries":[{"failureLabels":{`, `}}]}}`, strEntry),
		stringOf("a stack trace of empty lines", `{"exceptionHistory":{"entries":[{"stacktrace":"`, `"}]}}`, escapedLine),
	}},
	{"GetCheckpoints", func(ctx context.Context, c *Client, url string) error {
		_, err := c.GetCheckpoints(ctx, url, testJobID)
		return err
	}, []placement{
		arrayOf("history of empty objects", `{"history":[`, `]}`),
		mapOf("huge task statistics (ignored)", `{"latest":{"completed":{"tasks":{`, `}}}}`, objEntry),
		stringOf("a long path", `{"latest":{"completed":{"external_path":"`, `"}}}`, letter),
	}},
	{"GetTaskManagers", func(ctx context.Context, c *Client, url string) error {
		_, err := c.GetTaskManagers(ctx, url)
		return err
	}, []placement{arrayOf("task managers of empty objects", `{"taskmanagers":[`, `]}`)}},
	{"GetSavepointStatus", func(ctx context.Context, c *Client, url string) error {
		_, err := c.GetSavepointStatus(ctx, url, testJobID, testTriggerID)
		return err
	}, []placement{
		anyField,
		stringOf("a failure of empty lines", `{"status":{"id":"COMPLETED"},"operation":{"failure-cause":{"stack-trace":"`, `"}}}`, escapedLine),
		stringOf("a long location", `{"status":{"id":"COMPLETED"},"operation":{"location":"`, `"}}`, letter),
	}},
	{"TriggerSavepoint", func(ctx context.Context, c *Client, url string) error {
		_, err := c.TriggerSavepoint(ctx, url, testJobID, SavepointRequest{})
		return err
	}, []placement{anyField, stringOf("a long request id", `{"request-id":"`, `"}`, letter)}},
	{"TriggerCheckpoint", func(ctx context.Context, c *Client, url string) error {
		_, err := c.TriggerCheckpoint(ctx, url, testJobID, CheckpointRequest{})
		return err
	}, []placement{anyField, stringOf("a long request id", `{"request-id":"`, `"}`, letter)}},
	{"GetCheckpointStatus", func(ctx context.Context, c *Client, url string) error {
		_, err := c.GetCheckpointStatus(ctx, url, testJobID, testTriggerID)
		return err
	}, []placement{
		anyField,
		stringOf("a failure of empty lines", `{"status":{"id":"COMPLETED"},"operation":{"failureCause":{"stack-trace":"`, `"}}}`, escapedLine),
	}},
	{"GetCheckpointDetails", func(ctx context.Context, c *Client, url string) error {
		_, err := c.GetCheckpointDetails(ctx, url, testJobID, 7)
		return err
	}, []placement{anyField, stringOf("a long path", `{"id":7,"status":"COMPLETED","external_path":"`, `"}`, letter)}},
	{"SubmitJob", func(ctx context.Context, c *Client, url string) error {
		_, err := c.SubmitJob(ctx, url, testJarID, SubmitJobRequest{})
		return err
	}, []placement{anyField, stringOf("a long job id", `{"jobid":"`, `"}`, letter)}},
	{"UploadJar", func(ctx context.Context, c *Client, url string) error {
		_, err := c.UploadJar(ctx, url, "app.jar", strings.NewReader("PK"))
		return err
	}, []placement{anyField, stringOf("a long file name", `{"status":"success","filename":"`, `"}`, letter)}},
	{"GetJobResourceRequirements", func(ctx context.Context, c *Client, url string) error {
		_, err := c.GetJobResourceRequirements(ctx, url, testJobID)
		return err
	}, []placement{mapOf("a huge vertex map", `{`, `}`, objEntry)}},
	{"VertexMetricNames", func(ctx context.Context, c *Client, url string) error {
		_, err := c.VertexMetricNames(ctx, url, testJobID, testVertexID)
		return err
	}, []placement{
		arrayOf("metrics of empty objects", `[`, `]`),
		stringOf("a long metric name", `[{"id":"`, `"}]`, letter),
	}},
	{"VertexMetrics", func(ctx context.Context, c *Client, url string) error {
		_, err := c.VertexMetrics(ctx, url, testJobID, testVertexID, []string{MetricBusyTime})
		return err
	}, []placement{
		arrayOf("metrics of empty objects", `[`, `]`),
		stringOf("a long metric name", `[{"id":"`, `"}]`, letter),
	}},
	{"CancelJob", func(ctx context.Context, c *Client, url string) error {
		return c.CancelJob(ctx, url, testJobID)
	}, []placement{anyField}},
	{"DisposeSavepoint", func(ctx context.Context, c *Client, url string) error {
		return c.DisposeSavepoint(ctx, url, "s3://b/sp/savepoint-1")
	}, []placement{anyField}},
	{"DeleteJar", func(ctx context.Context, c *Client, url string) error {
		return c.DeleteJar(ctx, url, testJarID)
	}, []placement{anyField}},
	{"UpdateJobResourceRequirements", func(ctx context.Context, c *Client, url string) error {
		return c.UpdateJobResourceRequirements(ctx, url, testJobID, JobResourceRequirements{"v": {}})
	}, []placement{anyField}},
}

// errorPlaces are worst error answers: Flink's shape with a flood of messages or one message
// of empty lines, and text that is no JSON.
var errorPlaces = []placement{
	{name: "a flood of error messages", head: `{"errors":[`, tail: `]}`, sep: ",", unit: emptyString, constant: true},
	stringOf("an error of empty lines", `{"errors":["`, `"]}`, escapedLine),
	{name: "words that are no JSON", sep: " ", unit: word, constant: true},
}

// worstCase is one answer to one call.
type worstCase struct {
	call readCall
	answer
}

func (c worstCase) String() string {
	enc := "Content-Length"
	if c.chunked {
		enc = "chunked"
	}
	what := c.place.name
	if c.deep != "" {
		what = "nesting " + c.deep
	}
	if c.pieces > 0 {
		what = fmt.Sprintf("%s, %d of them", what, c.pieces)
	}
	return fmt.Sprintf("%s/%d %s/%d bytes/%s", c.call.op, c.status, what, c.size, enc)
}

// worstCases builds, for every call, each placement and both nestings at the call's cap and just
// under the old 16 MiB cap, sent with and without a length; for placements of values, also the
// most values the client admits at the cap, the worst answer it decodes in full; and error
// answers to a read, a submission and a cancel.
func worstCases() []worstCase {
	var out []worstCase
	add := func(call readCall, status int, p placement, deep string, size int64, pieces int) {
		for _, chunked := range []bool{false, true} {
			out = append(out, worstCase{call, answer{status: status, place: p, deep: deep, size: size, pieces: pieces, chunked: chunked}})
		}
	}
	for _, call := range readCalls {
		limit, values, _ := boundsOf(call.op)
		places := append(slices.Clip(call.places), placement{name: "nesting"})
		for _, p := range places {
			deep := []string{""}
			if p.unit == nil {
				deep = []string{"[", "{"}
			}
			for _, d := range deep {
				add(call, http.StatusOK, p, d, limit, 0)
				add(call, http.StatusOK, p, d, oldCap-1, 0)
			}
			if n := values(limit) - 8; p.valued() && n > 0 {
				add(call, http.StatusOK, p, "", limit, n)
			}
		}
	}
	for _, op := range []string{"GetJob", "SubmitJob", "CancelJob"} {
		for _, call := range readCalls {
			if call.op != op {
				continue
			}
			for _, p := range errorPlaces {
				add(call, http.StatusInternalServerError, p, "", oldCap-1, 0)
			}
		}
	}
	return out
}

// lowGC makes the heap the watch sees track the live heap, which is what the ceiling is about. At
// Go's default the heap grows to twice what is live before a collection, and on a busy machine
// the collector lags further. A low GC percent collects early; a soft memory limit below the
// ceiling makes the collector work harder as the heap nears it, so that what the watch sees above
// the limit is live. On the old code the live heap alone is gigabytes.
func lowGC(t *testing.T) {
	oldPercent := debug.SetGCPercent(20)
	oldLimit := debug.SetMemoryLimit(heapCeiling * 3 / 4)
	t.Cleanup(func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	})
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// slowConfig waits long enough that the worst cases on a busy machine end in an answer, not in
// a timeout.
func slowConfig() Config {
	return Config{GetTimeout: time.Minute, PostTimeout: time.Minute, SubmitTimeout: time.Minute}
}

func TestTheWorstAnswersToEveryCallCostLittle(t *testing.T) {
	lowGC(t)
	cases := worstCases()
	answers := make([]answer, len(cases))
	for i, c := range cases {
		answers[i] = c.answer
	}
	ws := newWorstServer(t, answers)
	c := newTestClient(slowConfig())
	var worst uint64
	var worstCase string
	for i, wc := range cases {
		ok := t.Run(wc.String(), func(t *testing.T) {
			h := heapwatch.Start()
			err := wc.call.call(context.Background(), c, ws.url(i))
			peak := h.End()
			if peak > worst {
				worst, worstCase = peak, wc.String()
			}
			if peak >= heapCeiling {
				t.Fatalf("the heap peaked at %s reading %s (ceiling %s); the call returned %v", mib(peak), wc, mib(heapCeiling), err)
			}
			// What the answer took is what the budget must count for it.
			if _, _, cost := boundsOf(wc.call.op); wc.status == http.StatusOK && peak-min(peak, h.Base) > cost(wc.size)+requestCost {
				t.Errorf("the answer took %s of heap, more than the %s the budget counts for it", mib(peak-h.Base), mib(cost(wc.size)))
			}
		})
		if !ok {
			t.FailNow() // one case over the ceiling is enough, and on the old code the next ones are bigger
		}
	}
	t.Logf("%d worst answers: the heap peaked at %s, reading %s", len(cases), mib(worst), worstCase)
}

// 32 workers (the most the operator's default takes) reading the worst answers at once: the in-flight budget
// keeps their sum small. Each worker reads a few answers, the costliest first, so that at the
// start all 32 read the costliest answers at the same time.
func TestWorkersReadingTheWorstAnswersAtOnceStayWithinTheBudget(t *testing.T) {
	lowGC(t)
	var cases []worstCase
	for _, wc := range worstCases() {
		if limit, _, _ := boundsOf(wc.call.op); wc.size == limit && wc.status == http.StatusOK && wc.deep == "" {
			cases = append(cases, wc)
		}
	}
	costOf := func(wc worstCase) uint64 { _, _, cost := boundsOf(wc.call.op); return cost(wc.size) }
	slices.SortStableFunc(cases, func(a, b worstCase) int { return cmp.Compare(costOf(b), costOf(a)) })
	answers := make([]answer, len(cases))
	for i, c := range cases {
		answers[i] = c.answer
	}
	ws := newWorstServer(t, answers)
	c := newTestClient(slowConfig())

	// One answer alone first: if it does not fit, 32 at once would only take the machine down.
	h := heapwatch.Start()
	_ = cases[0].call.call(context.Background(), c, ws.url(0))
	if peak := h.End(); peak >= heapCeiling {
		t.Fatalf("one answer alone took the heap to %s (%s)", mib(peak), cases[0])
	}

	const workers, rounds = 32, 4
	var failed atomic.Int32
	var wg sync.WaitGroup
	start := time.Now()
	h = heapwatch.Start()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				i := (w + r*workers) % len(cases)
				if cases[i].call.call(context.Background(), c, ws.url(i)) != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	peak := h.End()
	t.Logf("%d workers read %d worst answers each in %s (%d refused or failed): the heap went from %s to %s",
		workers, rounds, time.Since(start).Round(time.Millisecond), failed.Load(), mib(h.Base), mib(peak))
	if peak >= heapCeiling {
		t.Fatalf("the heap peaked at %s (ceiling %s)", mib(peak), mib(heapCeiling))
	}
}
