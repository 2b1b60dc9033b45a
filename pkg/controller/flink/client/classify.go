package client

import (
	"bytes"
	"net/http"
)

// retryPolicy says how a call's failures are classified; the package doc has the table.
type retryPolicy int

const (
	// readPolicy is for GETs: no side effects, so anything transient is worth another try.
	readPolicy retryPolicy = iota
	// idempotentWritePolicy is for cancel and savepoint triggers, which Flink lets a caller
	// repeat safely.
	idempotentWritePolicy
	// submitPolicy is for /jars/:jarid/run, which may start a job even when the caller never
	// hears back.
	submitPolicy
)

// submitFailureMarkers are body substrings of 5xx submit answers that will not change on a
// retry: main() failed or could not be found, the submission was rejected, or the jar is gone.
var submitFailureMarkers = []string{
	"ProgramInvocationException",
	"JobSubmissionException",
	"does not exist",
}

// retryableTransport classifies a failure without an HTTP response. written reports whether any
// of the request reached the wire.
func (p retryPolicy) retryableTransport(written bool) bool {
	if p == submitPolicy {
		return !written
	}
	return true
}

// retryableStatus classifies a non-2xx answer.
func (p retryPolicy) retryableStatus(status int, body []byte) bool {
	switch p {
	case submitPolicy:
		switch {
		case status == http.StatusBadGateway, status == http.StatusGatewayTimeout:
			// Flink never sends these; a proxy that may have forwarded the request did.
			return false
		case status >= 500:
			for _, marker := range submitFailureMarkers {
				if bytes.Contains(body, []byte(marker)) {
					return false
				}
			}
			return true
		default:
			return false
		}
	case readPolicy:
		if status == http.StatusNotFound {
			return true
		}
	}
	switch {
	case status == http.StatusRequestTimeout, status == http.StatusServiceUnavailable:
		return true
	case status >= 500:
		return true
	default:
		return false
	}
}
