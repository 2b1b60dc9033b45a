package flinkapplication

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/flinkfsm/flinkfsm/pkg/controller/checkpointbook"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// checkpointRecords is where the pass's job's checkpoints are recorded (lifecycle.Pass).
func (rc *Context) checkpointRecords() jobstate.CheckpointRecords { return rc.CheckpointRecords() }

// jobState is the status side of the owner's jobs as this pass sees it (lifecycle.Pass).
func (rc *Context) jobState() jobstate.Job { return rc.JobState() }

// bookPage is the page of the checkpoint book with this key, as the cluster has it; nil when it is
// not there or cannot be read.
func (e *Environment) bookPage(k checkpointbook.Key) *corev1.ConfigMap {
	page, err := e.Observer.CheckpointBookPage(k.Namespace, checkpointbook.PageName(k))
	if err != nil {
		return nil
	}
	return page
}
