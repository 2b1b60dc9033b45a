package flinkapplication

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// StepError is a failed step of a handler, marked retryable or not. Errors from the Flink client keep
// the client's own classification.
type StepError struct {
	Step      string
	Retryable bool
	Err       error
}

func (e *StepError) Error() string { return fmt.Sprintf("%s: %v", e.Step, e.Err) }
func (e *StepError) Unwrap() error { return e.Err }

func retryable(step string, err error) error {
	return &StepError{Step: step, Retryable: true, Err: err}
}

func permanent(step string, err error) error {
	return &StepError{Step: step, Retryable: false, Err: err}
}

// kubeError classifies a failed write of a Deployment or Service. The API server answers 422
// (Invalid) or 400 (BadRequest) when the object itself is wrong (a name too long for a Service, a
// quantity it cannot parse, two ports alike): the same object is refused again, so the deploy fails
// at once with the server's message instead of after every retry. Anything else may pass next time.
func kubeError(step string, err error) error {
	if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		return permanent(step, err)
	}
	return retryable(step, err)
}

// isRetryable says whether another attempt may succeed. Kubernetes API errors are retryable unless
// kubeError found the object itself refused; unknown errors are retryable too, since a wrongly
// permanent error would fail a deploy that a retry would have saved.
func isRetryable(err error) bool {
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

// errorMethod names the failing call for status.lastSeenError.method.
func errorMethod(err error) string {
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
