package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode"
)

// Error is every failure the client returns. See the package doc for which ones are retryable.
type Error struct {
	// Method is the API operation that failed, e.g. "SubmitJob".
	Method string
	// StatusCode is the HTTP status, or 0 when no response arrived (transport error, timeout,
	// invalid arguments).
	StatusCode int
	// Message is a one-line reason fit for a status field: the first line of Flink's errors[0]
	// (with its deepest "Caused by:" appended when there is one), the most specific cause line
	// of an "Internal server error.", or the start of a non-JSON body.
	Message string
	// Retryable says whether sending the same request later may succeed without doing harm.
	Retryable bool
	// Cause is the underlying transport or decoding error, if any.
	Cause error
}

func (e *Error) Error() string {
	if e.StatusCode == 0 {
		return fmt.Sprintf("flink %s: %s", e.Method, e.Message)
	}
	return fmt.Sprintf("flink %s: HTTP %d: %s", e.Method, e.StatusCode, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// IsRetryable reports whether the request that produced err may be sent again. Errors that do
// not come from this package (a caller's own context deadline, say) count as retryable: they
// say nothing about the JobManager.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Retryable
	}
	return true
}

// IsNotFound reports whether Flink answered 404: an unknown job, route or savepoint trigger.
func IsNotFound(err error) bool { return hasStatus(err, http.StatusNotFound) }

// IsConflict reports whether Flink answered 409, which CancelJob gets when the job has already
// reached another terminal state (FINISHED or FAILED).
func IsConflict(err error) bool { return hasStatus(err, http.StatusConflict) }

func hasStatus(err error, code int) bool {
	var e *Error
	return errors.As(err, &e) && e.StatusCode == code
}

const (
	// maxRawMessage caps the text taken from a body that is not Flink's error JSON (an HTML
	// page from a proxy, say).
	maxRawMessage = 300
	// maxLineMessage caps one exception line; user exceptions can carry huge messages.
	maxLineMessage = 500
	// internalServerError is errors[0] of any exception Flink did not map to a status; the
	// useful text is then in errors[1].
	internalServerError = "Internal server error."
)

// errorMessage turns an error response body into a one-line reason.
func errorMessage(status int, body []byte) string {
	return Excerpt(rawErrorMessage(status, body))
}

// maxExcerpt bounds any text of a JobManager's that reaches status or an Event.
const maxExcerpt = 600

// Excerpt makes text a JobManager sent fit for status and Events: one line, printable characters
// only, at most a few hundred bytes. A JobManager runs the user's image; what it answers is
// untrusted, and status is read by people and tools.
func Excerpt(s string) string { return squeeze(s, maxExcerpt) }

// squeeze turns s into one line of printable characters with single spaces, cut at n bytes (plus
// "..."). It stops reading s once it has n bytes, so a huge s costs no more than a small one.
func squeeze(s string, n int) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r' || r == '\t' || r == ' ':
			space = true
			continue
		case !unicode.IsPrint(r):
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
		if b.Len() > n {
			break
		}
	}
	return truncate(b.String(), n)
}

// maxExcerptInput bounds how much of a body squeeze is given: far more than any message it keeps.
const maxExcerptInput = 64 << 10

// bodyExcerpt is the start of a body that is not the JSON expected, as one line of at most n bytes.
func bodyExcerpt(body []byte, n int) string {
	return squeeze(string(body[:min(len(body), maxExcerptInput)]), n)
}

// errorBody is Flink's error answer.
type errorBody struct {
	Errors []string `json:"errors"`
}

func rawErrorMessage(status int, body []byte) string {
	var parsed errorBody
	// An error answer is decoded only when its shape is Flink's; otherwise its start is the message.
	if checkShape(body, errorAnswer.values, maxNesting) == "" && json.Unmarshal(body, &parsed) == nil && len(parsed.Errors) > 0 {
		if strings.TrimSpace(parsed.Errors[0]) == internalServerError && len(parsed.Errors) > 1 {
			if line := mostSpecificLine(parsed.Errors[1]); line != "" {
				return line
			}
		}
		if msg := summarizeTrace(parsed.Errors[0]); msg != "" {
			return msg
		}
	}
	if raw := bodyExcerpt(body, maxRawMessage); raw != "" {
		return raw
	}
	return http.StatusText(status)
}

// traceHeads returns the first line of a Java stack trace that describes an exception and its
// deepest "Caused by:" (without the prefix), or "" for either. Frames, "... n more" elisions and
// Flink's "<Exception on server side:" envelope are skipped. It walks the trace without splitting
// it: a trace of millions of lines costs nothing more.
func traceHeads(trace string) (first, cause string) {
	for trace != "" {
		var line string
		line, trace, _ = strings.Cut(trace, "\n")
		line = strings.TrimSpace(line)
		switch {
		case line == "",
			strings.HasPrefix(line, "at "),
			strings.HasPrefix(line, "..."),
			strings.HasPrefix(line, "<Exception on server side"),
			strings.HasPrefix(line, "End of exception on server side"):
			continue
		}
		if first == "" {
			first = line
		}
		if c, ok := strings.CutPrefix(line, "Caused by:"); ok {
			cause = strings.TrimSpace(c)
		}
	}
	return first, cause
}

// mostSpecificLine picks the root cause of a trace, falling back to its first exception line.
// For a missing jar this is the "Jar file <path> does not exist" line.
func mostSpecificLine(trace string) string {
	first, cause := traceHeads(trace)
	if cause != "" {
		return truncate(cause, maxLineMessage)
	}
	return truncate(first, maxLineMessage)
}

// summarizeTrace returns the first line of a trace, plus its root cause when that adds
// something: for "Could not execute application." the cause is the actual reason.
func summarizeTrace(trace string) string {
	first, cause := traceHeads(trace)
	if first == "" {
		return ""
	}
	first = truncate(first, maxLineMessage)
	if cause == "" || strings.Contains(first, cause) {
		return first
	}
	return first + " (caused by " + truncate(cause, maxLineMessage) + ")"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary so the message stays valid UTF-8.
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// duplicateSubmissions are the exceptions Flink answers a submission with when a job with the
// requested id already exists (or, with a persistent job result store, existed). From 2.3 on a job
// run from a jar is an application of the job's own id, which the Dispatcher refuses first: as an
// application already submitted.
var duplicateSubmissions = []string{"DuplicateJobSubmissionException", "DuplicateApplicationSubmissionException"}

// IsDuplicateSubmission reports whether Flink refused a submission because the job id is already
// taken: the job was submitted before, so the submission the caller wanted has happened.
func IsDuplicateSubmission(err error) bool {
	var e *Error
	if !errors.As(err, &e) || e.StatusCode == 0 {
		return false
	}
	for _, class := range duplicateSubmissions {
		if strings.Contains(e.Message, class) {
			return true
		}
	}
	return false
}

// IsNoAnswer reports whether a request that was sent got no answer from Flink: a transport
// failure, a timeout, or a proxy's 502/504. Flink may or may not have acted on it.
func IsNoAnswer(err error) bool {
	var e *Error
	if !errors.As(err, &e) || errors.Is(e.Cause, errInvalidArgument) {
		return false
	}
	return e.StatusCode == 0 || e.StatusCode == http.StatusBadGateway || e.StatusCode == http.StatusGatewayTimeout
}

// IsJobNotFound reports whether the JobManager itself answered that it does not know the job:
// a 404 whose message names the job. A 404 from anything in between (a proxy, a Service that
// points nowhere) does not name it and is not evidence about the job; nor does Flink's own answer
// that it has no such route (IsRouteNotFound), which names the path and so the job in it.
func IsJobNotFound(err error, jobID string) bool {
	var e *Error
	return jobID != "" && errors.As(err, &e) && e.StatusCode == http.StatusNotFound && strings.Contains(e.Message, jobID) &&
		!IsRouteNotFound(err)
}
