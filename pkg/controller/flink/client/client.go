package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/go-resty/resty/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// Config tunes the client. Zero durations and an empty UserAgent take DefaultConfig's values.
type Config struct {
	// GetTimeout bounds each GET. Reads are cheap and retried by the caller, so failing fast
	// keeps a reconcile loop from stalling on a dead JobManager.
	GetTimeout time.Duration
	// PostTimeout bounds savepoint triggers and cancels, which Flink acknowledges quickly but
	// only after a round trip to the JobMaster.
	PostTimeout time.Duration
	// SubmitTimeout bounds /jars/:jarid/run, which runs the program's main() in the request.
	SubmitTimeout time.Duration
	// UserAgent is sent with every request so JobManager logs show who called.
	UserAgent string
	// Transport, when set, carries every request: the API server's, with its CA and credentials,
	// when JobManagers are reached through its service proxy. The two settings below shape the
	// client's own transport and do not apply to it.
	Transport http.RoundTripper
	// IdleConnectionsPerJobManager is how many connections to one JobManager stay open between
	// calls; zero keeps resty's default (GOMAXPROCS+1). There is no limit on the idle connections
	// of all JobManagers together: an operator polls every JobManager of its fleet each
	// statusPollInterval, and with the pool capped at resty's 100 for all hosts, a fleet of more than
	// 100 evicts each connection before its JobManager's next poll, so nearly every call dialled
	// (three goroutines, a TCP handshake and, with ServiceDNS, a DNS lookup). Kept, an idle connection
	// costs about 20 KiB (two goroutines and their buffers), so 200 MiB at 10,000 JobManagers.
	IdleConnectionsPerJobManager int
	// IdleTimeout is how long an unused connection stays open; zero keeps resty's default (90 s).
	// It should outlast the time between two polls of one JobManager, or every poll dials.
	IdleTimeout time.Duration
}

// DefaultConfig returns the timeouts the operator uses unless configured otherwise.
func DefaultConfig() Config {
	return Config{
		GetTimeout:    5 * time.Second,
		PostTimeout:   30 * time.Second,
		SubmitTimeout: 60 * time.Second,
		UserAgent:     "flinkfsm",
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.GetTimeout <= 0 {
		c.GetTimeout = d.GetTimeout
	}
	if c.PostTimeout <= 0 {
		c.PostTimeout = d.PostTimeout
	}
	if c.SubmitTimeout <= 0 {
		c.SubmitTimeout = d.SubmitTimeout
	}
	if c.UserAgent == "" {
		c.UserAgent = d.UserAgent
	}
	return c
}

// Client implements API over one shared resty client, so connections are pooled across calls
// and JobManagers. It is safe for concurrent use.
type Client struct {
	cfg     Config
	http    *resty.Client
	metrics *metrics
	// bareHeader is what sendBare sends: resty's client headers.
	bareHeader http.Header
}

var _ API = (*Client)(nil)

// New returns a client whose metrics are registered with reg (see the package doc about sharing
// a registerer). A nil reg keeps the metrics out of any registry.
func New(cfg Config, reg prometheus.Registerer) *Client {
	cfg = cfg.withDefaults()
	h := resty.New().
		SetHeader("User-Agent", cfg.UserAgent).
		SetHeader("Accept", "application/json").
		// The client reads every body itself, within the bounds of answers.go.
		SetDoNotParseResponse(true).
		// A JobManager runs the user's image, so its answers are untrusted: a redirect is answered
		// as the error it is, never followed to wherever it points (the API server, a cloud
		// metadata service).
		SetRedirectPolicy(resty.RedirectPolicyFunc(func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }))
	if cfg.Transport != nil {
		h.SetTransport(cfg.Transport)
	} else if t, err := h.Transport(); err == nil {
		keepPerJobManager(t, cfg)
	}
	return &Client{cfg: cfg, http: h, metrics: newMetrics(reg), bareHeader: http.Header{
		"User-Agent": {cfg.UserAgent}, "Accept": {"application/json"},
	}}
}

// keepPerJobManager shapes resty's transport for a fleet of JobManagers (see
// Config.IdleConnectionsPerJobManager): idle connections are bounded per JobManager rather than
// for all of them, and their write buffers are small, since what the operator sends is a request
// line, a few headers and small JSON bodies (a jar's upload is written past the buffer).
func keepPerJobManager(t *http.Transport, cfg Config) {
	t.MaxIdleConns = 0
	if cfg.IdleConnectionsPerJobManager > 0 {
		t.MaxIdleConnsPerHost = cfg.IdleConnectionsPerJobManager
	}
	if cfg.IdleTimeout > 0 {
		t.IdleConnTimeout = cfg.IdleTimeout
	}
	t.WriteBufferSize = 1 << 10
}

// request describes one REST call.
type request struct {
	op     string // API method name: Error.Method and the metrics label
	method string
	path   []string // unescaped path segments below the base URL
	query  url.Values
	body   any
	upload *fileUpload // sent as multipart/form-data instead of body
	out    any         // decodes a 2xx answer, when set
	// onlyOut says the caller reads a 2xx answer through out alone, so its body's buffer is
	// reused once decoded (decode copies what it keeps).
	onlyOut bool
	timeout time.Duration
	policy  retryPolicy
}

// fileUpload is the one file part of a multipart/form-data request.
type fileUpload struct {
	field, name, contentType string
	body                     io.Reader
}

// sendUpload sends an upload past resty, on its HTTP client (transport, redirect policy): resty
// reads a request body whole into memory to be able to send it again, and a jar is sent once, as
// it is read.
func (c *Client) sendUpload(ctx context.Context, r request, target string) (*http.Response, error) {
	body, contentType := r.upload.stream()
	defer body.Close()
	req, err := http.NewRequestWithContext(ctx, r.method, target, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	req.Header.Set("Accept", "application/json")
	return c.http.GetClient().Do(req)
}

// sendBare sends a request without a body past resty, on its HTTP client (transport, redirect
// policy), with the headers resty would add. Nearly every call is one (the polls of every job), and
// resty's setup of each (its request object, a copy of the client's headers and their parsing)
// was a seventh of what the operator allocated at 10,000 applications.
func (c *Client) sendBare(ctx context.Context, r request, target string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, r.method, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header = c.bareHeader // shared: an http.Client and its transport never change a request's header
	return c.http.GetClient().Do(req)
}

// quoteEscaper escapes a quoted-string of a Content-Disposition header as mime/multipart does.
var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"")

// stream is the multipart/form-data body of the upload, written as it is sent: the file goes from
// its reader to the wire through the pipe's buffer, never whole into memory (resty's multipart
// support builds the body in a buffer first, and a fat jar of 200 MiB would pass the operator's
// memory limit). The body is closed when the request is done, which ends the writer.
func (u *fileUpload) stream() (io.ReadCloser, string) {
	pr, pw := io.Pipe()
	w := multipart.NewWriter(pw)
	go func() {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`, quoteEscaper.Replace(u.field), quoteEscaper.Replace(u.name)))
		h.Set("Content-Type", u.contentType)
		part, err := w.CreatePart(h)
		if err == nil {
			_, err = io.Copy(part, u.body)
		}
		if err == nil {
			err = w.Close()
		}
		pw.CloseWithError(err)
	}()
	return pr, w.FormDataContentType()
}

var (
	errDecode          = errors.New("unexpected response body")
	errInvalidArgument = errors.New("invalid argument")
)

// send performs r against baseURL, decodes a 2xx answer into r.out when set, and returns the
// status and body of the answer; any other outcome is an *Error classified by r.policy. The body
// is read and decoded within the bounds of answers.go.
func (c *Client) send(ctx context.Context, baseURL string, r request) (int, []byte, error) {
	target, err := endpoint(baseURL, r.query, r.path...)
	if err != nil {
		return 0, nil, invalid(r.op, err)
	}
	callCtx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()

	// SubmitJob needs to know whether Flink may have seen the request; see retryableTransport.
	var written atomic.Bool
	traced := httptrace.WithClientTrace(callCtx, &httptrace.ClientTrace{
		WroteHeaders: func() { written.Store(true) },
	})
	var raw *http.Response
	switch {
	case r.upload != nil:
		raw, err = c.sendUpload(traced, r, target)
	case r.body == nil:
		raw, err = c.sendBare(traced, r, target)
	default:
		req := c.http.R().SetContext(traced).SetHeader("Content-Type", "application/json").SetBody(r.body)
		var resp *resty.Response
		if resp, err = req.Execute(r.method, target); err == nil {
			raw = resp.RawResponse
		}
	}
	if err != nil {
		return 0, nil, r.unanswered(ctx, err, written.Load())
	}
	defer raw.Body.Close()
	got, err := receive(callCtx, r.op, raw, r.onlyOut)
	if err != nil {
		return 0, nil, r.unanswered(ctx, err, written.Load())
	}
	defer got.release()
	status, body := raw.StatusCode, got.body
	switch {
	case got.refusal != nil:
		return status, nil, got.refusal
	case status < 200 || status > 299:
		return status, body, &Error{
			Method:     r.op,
			StatusCode: status,
			Message:    errorMessage(status, body),
			Retryable:  r.policy.retryableStatus(status, body),
		}
	case r.out != nil && r.onlyOut:
		err := decode(r.op, got.limit, status, body, r.out)
		got.recycle()
		return status, nil, err
	case r.out != nil:
		return status, body, decode(r.op, got.limit, status, body, r.out)
	}
	return status, body, nil
}

// unanswered reports a request that got no answer it could read: a transport failure, a timeout,
// or no room in the budget to read the answer before the call's timeout. written says whether any
// of the request reached the wire.
func (r request) unanswered(ctx context.Context, err error, written bool) *Error {
	msg := err.Error()
	if isTimeout(err) && ctx.Err() == nil {
		msg = fmt.Sprintf("no answer within %s: %v", r.timeout, err)
	}
	return &Error{
		Method:    r.op,
		Message:   msg,
		Retryable: r.policy.retryableTransport(written),
		Cause:     err,
	}
}

// getJSON sends a GET and decodes its answer into out.
func (c *Client) getJSON(ctx context.Context, baseURL, op string, out any, path ...string) error {
	_, _, err := c.send(ctx, baseURL, request{
		op: op, method: http.MethodGet, path: path, out: out, onlyOut: true, timeout: c.cfg.GetTimeout, policy: readPolicy,
	})
	return err
}

// v1Semantics decodes answers as encoding/json does (names matched regardless of case, the last of
// duplicate names kept, invalid UTF-8 replaced), with encoding/json/v2's decoder, which at 10,000
// applications halves the CPU and allocations of decoding a poll's answers: the job details of
// every job every statusPollInterval were a sixth of the operator's CPU.
var v1Semantics = jsonv1.DefaultOptionsV1()

// decode checks the shape of a 2xx body against lim, then decodes it into out. Both fail with a
// non-retryable *Error: a body of the wrong shape will not change.
func decode(op string, lim answerLimit, status int, body []byte, out any) error {
	if why := checkShape(body, lim.valuesFor(len(body)), maxNesting); why != "" {
		return refused(op, lim, status, why)
	}
	if err := jsonv2.Unmarshal(body, out, v1Semantics); err != nil {
		return &Error{
			Method:     op,
			StatusCode: status,
			Message:    fmt.Sprintf("%v: %s", errDecode, bodyExcerpt(body, maxRawMessage)),
			Cause:      fmt.Errorf("%w: %w", errDecode, err),
		}
	}
	return nil
}

// invalid reports a call that was never sent because its arguments were unusable.
func invalid(op string, err error) *Error {
	return &Error{Method: op, Message: err.Error(), Cause: fmt.Errorf("%w: %w", errInvalidArgument, err)}
}

// requireID rejects an empty id, which would otherwise address a different route
// (e.g. "/jobs/" instead of "/jobs/<id>").
func requireID(op, name, value string) error {
	if strings.TrimSpace(value) == "" {
		return invalid(op, fmt.Errorf("%s must not be empty", name))
	}
	return nil
}

// endpoint appends escaped path segments to base, keeping any path prefix base carries.
func endpoint(base string, query url.Values, segments ...string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("invalid base URL %q: %w", base, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("invalid base URL %q: need http(s)://host[:port][/prefix]", base)
	}
	escaped := make([]string, len(segments))
	for i, s := range segments {
		escaped[i] = url.PathEscape(s)
	}
	raw := strings.TrimRight(u.EscapedPath(), "/") + "/" + strings.Join(escaped, "/")
	unescaped, err := url.PathUnescape(raw)
	if err != nil {
		return "", fmt.Errorf("invalid base URL %q: %w", base, err)
	}
	u.Path, u.RawPath = unescaped, raw
	if len(query) > 0 {
		q := u.Query()
		for k, v := range query {
			q[k] = v
		}
		u.RawQuery = q.Encode()
	}
	u.Fragment = ""
	return u.String(), nil
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
