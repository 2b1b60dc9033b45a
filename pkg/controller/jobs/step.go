package jobs

import (
	"errors"
	"fmt"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// Wait is what the caller does while a job operation is not done.
type Wait struct {
	// Persist asks for the record to be written before the next pass: the operation chose an id
	// that must be stored before the call that depends on it.
	Persist bool
	// Err is a failed call or a state that is not known; the caller retries it with backoff.
	Err error
	// After is when to look again; zero is the caller's usual interval.
	After time.Duration
}

func persist() *Wait                  { return &Wait{Persist: true} }
func retry(err error) *Wait           { return &Wait{Err: err} }
func later(after time.Duration) *Wait { return &Wait{After: after} }

// StepError is a failed step of a job operation or of a handler, marked retryable or not. Errors
// from the Flink client keep the client's own classification.
type StepError struct {
	Step      string
	Retryable bool
	Err       error
}

func (e *StepError) Error() string { return fmt.Sprintf("%s: %v", e.Step, e.Err) }
func (e *StepError) Unwrap() error { return e.Err }

// Retryable marks err, a failure of step, as one that another attempt may get past.
func Retryable(step string, err error) error {
	return &StepError{Step: step, Retryable: true, Err: err}
}

// Permanent marks err, a failure of step, as one that the same attempt meets again.
func Permanent(step string, err error) error {
	return &StepError{Step: step, Retryable: false, Err: err}
}

// IsRetryable says whether another attempt may succeed. Unknown errors are retryable, since a
// wrongly permanent error would fail a deploy that a retry would have saved.
func IsRetryable(err error) bool {
	var se *StepError
	if errors.As(err, &se) {
		return se.Retryable
	}
	var fe *client.Error
	if errors.As(err, &fe) {
		return fe.Retryable
	}
	return true
}

// ErrorMethod names the failing call, for a status that records it.
func ErrorMethod(err error) string {
	var fe *client.Error
	if errors.As(err, &fe) {
		return fe.Method
	}
	var se *StepError
	if errors.As(err, &se) {
		return se.Step
	}
	return ""
}
