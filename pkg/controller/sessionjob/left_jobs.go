package sessionjob

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// A FlinkSessionJob deleted with deleteMode None leaves its job running on the session cluster, and
// until that job completes a checkpoint of its own, a restart of it restores the state it started
// from. The session cluster names that state for the guardian in status.leftJobs (package
// sessioncluster); the job's delete waits until it does.

// leftJobWaits holds the delete of a session job whose deleteMode None leaves its job running from a
// state, until its cluster's stored status lists the job in leftJobs. Nothing is waited for when the
// session cluster is gone; nor when it is being deleted and its list is full, since its delete waits
// for this one and the job ends with it.
func leftJobWaits(p *Pass, rec *v1beta1.DeploymentRecord) (fsm.Outcome, bool) {
	if rec == nil || rec.JobID == "" || jobstate.StartStateOf(p.Job, rec) == "" {
		return fsm.Outcome{}, false
	}
	c := p.Cluster
	if c == nil {
		return fsm.Outcome{}, false
	}
	for _, l := range c.Status.LeftJobs {
		if l.JobID == rec.JobID {
			return fsm.Outcome{}, false
		}
	}
	from, full := jobstate.StartStateOf(p.Job, rec), len(c.Status.LeftJobs) >= jobstate.MaxLeftJobs
	if c.DeletionTimestamp != nil && full {
		return fsm.Outcome{}, false
	}
	msg := fmt.Sprintf("deleteMode None leaves job %s running from %s: the delete waits until FlinkSessionCluster %s lists it "+
		"in status.leftJobs, so that the state stays while the job may restart from it", rec.JobID, from, c.Name)
	if full {
		msg = fmt.Sprintf("deleteMode None leaves job %s running from %s, and FlinkSessionCluster %s already lists %d jobs left "+
			"running in status.leftJobs, each until it completes a checkpoint or ends: the delete waits for room. Cancel left jobs "+
			"in Flink to make room, or delete with deleteMode Savepoint", rec.JobID, from, c.Name, jobstate.MaxLeftJobs)
	}
	if p.Machine.Reason == msg {
		return fsm.Stay(0), true
	}
	return fsm.Outcome{Reason: "DeletionHeld", Message: msg, Warning: full}, true
}
