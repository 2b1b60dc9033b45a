package flinkapplication

import (
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessioncluster"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessionjob"
)

// What rests, for the loop's lanes and its quiet takeover (pkg/controller/loop): an object at rest
// is polled behind what needs the operator, and after a takeover its first pass is spread over most
// of a statusPollInterval.

// keyAtRest tells whether the cached object of the key is at rest: nothing it asks of the
// operator is lost by looking at it up to a statusPollInterval later.
func (c *Controller) keyAtRest(key queueKey) bool {
	obj, ok := c.watch.Cached(key.Kind, key.Namespace, key.Name)
	if !ok {
		// Gone, or not a kind the machine runs (an orphaned FlinkSnapshot): its pass is short.
		return false
	}
	var s subject
	switch o := obj.(type) {
	case *v1beta1.FlinkApplication:
		s = applicationSubject{o}
	case *v1beta1.FlinkSessionJob:
		s = sessionjob.Subject{FlinkSessionJob: o}
	case *v1beta1.FlinkSessionCluster:
		s = sessioncluster.Subject{FlinkSessionCluster: o}
	default:
		return false
	}
	return atRest(s) && !c.watch.SnapshotsWait(key.Kind, key.Namespace, key.Name)
}

// atRest tells whether an object rests in a steady phase with its spec acted on and nothing to
// retry. A job shown Red may be one to restart (restartFailedJob): it is looked at first.
func atRest(s subject) bool {
	if !fsm.AtRest(s) {
		return false
	}
	if j := s.Job(); j != nil && j.JobStatus.Health == v1beta1.Red {
		return false
	}
	return true
}
