package flinkapplication

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// kubeError classifies a failed write of a Deployment or Service. The API server answers 422
// (Invalid) or 400 (BadRequest) when the object itself is wrong (a name too long for a Service, a
// quantity it cannot parse, two ports alike): the same object is refused again, so the deploy fails
// at once with the server's message instead of after every retry. Anything else may pass next time.
func kubeError(step string, err error) error {
	if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		return jobs.Permanent(step, err)
	}
	return jobs.Retryable(step, err)
}
