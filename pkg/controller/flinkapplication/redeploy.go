package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// redeployFromNamedSavepoint makes the job about to be submitted start from the savepoint the user
// named, once per savepointRedeployNonce. The nonce is in the spec's hash, so changing it is an
// update like any other: a running job was stopped per its upgradeMode first, and the state that
// stop left stays in the ledger. Here, before the new job has an id, its start is switched to the
// named savepoint, which the ledger records, and the nonce is marked done, in the pass that submits
// the job: the submission carries the named savepoint, and should the pass's status write be lost,
// the next pass does the same again and finds the job it submitted. A candidate of another spec
// (one submitted before the nonce changed) is left alone: its job did not start from the named
// savepoint, and the update the new nonce asks for follows it.
//
// A redeploy from a FlinkSnapshot that has no path yet waits: the job is not submitted, from
// another state or none, until it has one.
func redeployFromNamedSavepoint(rc *Context, c *v1beta1.DeploymentRecord) (wait *Outcome) {
	s := rc.Settings
	if s == nil || s.RedeployNonce == "" || s.RedeployNonce == rc.Job.SavepointRedeployNonce || c == nil || c.SpecHash != rc.Hash {
		return nil
	}
	if s.RestoreWaiting != "" {
		waitingOn(rc, s.RestoreWaiting)
		out := stay(0)
		return &out
	}
	if s.RedeployFrom == "" {
		return nil
	}
	rc.Job.Deployments.NextRestorePath = s.RedeployFrom
	rc.Job.SavepointRedeployNonce = s.RedeployNonce
	rc.Ledger().RecordRedeploy(s.RedeployFrom, rc.Now)
	rc.Event(false, "RedeployFromSavepoint", fmt.Sprintf("%s changed: the new job starts from %s, as %s names",
		s.Field("savepointRedeployNonce"), s.RedeployFrom, namedBy(s)))
	return nil
}

// namedBy is the spec field that named the state a redeploy starts from.
func namedBy(s *jobSettings) string {
	if s.RestoreSnapshot != "" {
		return s.Field("restoreSnapshot") + " " + s.RestoreSnapshot
	}
	return s.Field("savepointPath")
}
