package clusters

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Error is a failed step of a write of a cluster's objects, marked as one another attempt may get
// past or not. Its text is "step: cause", as a failed step of a job operation says it, so the
// caller can carry it on in its own marking of steps unchanged.
type Error struct {
	Step string
	// Permanent: the same attempt meets it again.
	Permanent bool
	Err       error
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %v", e.Step, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

func retryable(step string, err error) error { return &Error{Step: step, Err: err} }
func permanent(step string, err error) error { return &Error{Step: step, Permanent: true, Err: err} }

// KubeError classifies a failed write of a Deployment or Service. The API server answers 422
// (Invalid) or 400 (BadRequest) when the object itself is wrong (a name too long for a Service, a
// quantity it cannot parse, two ports alike): the same object is refused again, so the deploy fails
// at once with the server's message instead of after every retry. Anything else may pass next time.
func KubeError(step string, err error) error {
	if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		return permanent(step, err)
	}
	return retryable(step, err)
}
