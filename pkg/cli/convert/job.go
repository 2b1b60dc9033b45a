package convert

import (
	"fmt"
	"strings"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// apacheJob is what an Apache job spec says that an application's and a session job's spec both
// take, each under its own field names.
type apacheJob struct {
	entryClass                                    string
	args                                          []string
	upgradeMode                                   v1beta1.UpgradeMode
	state                                         v1beta1.JobDesiredState
	savepointTrigger, checkpointTrigger, redeploy v1beta1.Nonce
	initialSavepoint                              string
	allowNonRestoredState                         bool
}

// jobOf reads the fields of an Apache job spec both kinds take.
func jobOf(job *fields) apacheJob {
	var j apacheJob
	j.entryClass, _ = job.text("entryClass")
	j.args = job.textList("args")
	j.upgradeMode = upgradeMode(job)
	j.state = desiredState(job)
	j.savepointTrigger = job.nonce("savepointTriggerNonce")
	j.checkpointTrigger = job.nonce("checkpointTriggerNonce")
	j.initialSavepoint, _ = job.text("initialSavepointPath")
	j.redeploy = redeployNonce(job, job.nonce("savepointRedeployNonce"), j.initialSavepoint)
	j.allowNonRestoredState, _ = job.boolean("allowNonRestoredState")
	return j
}

// upgradeMode is the job's upgradeMode. The Apache operator's default is stateless, flinkfsm's
// Savepoint: an Apache job without one is written Stateless, as it ran.
func upgradeMode(job *fields) v1beta1.UpgradeMode {
	s, _ := job.text("upgradeMode")
	switch strings.ToLower(s) {
	case "savepoint":
		return v1beta1.UpgradeModeSavepoint
	case "last-state":
		return v1beta1.UpgradeModeLastState
	case "", "stateless":
		return v1beta1.UpgradeModeStateless
	}
	job.out.warn(job.at("upgradeMode"), fmt.Sprintf("%q is not an upgrade mode; written Stateless, the Apache operator's default", s))
	return v1beta1.UpgradeModeStateless
}

// desiredState is the job's state: running or suspended.
func desiredState(job *fields) v1beta1.JobDesiredState {
	s, _ := job.text("state")
	switch strings.ToLower(s) {
	case "suspended":
		return v1beta1.JobStateSuspended
	case "", "running":
		return ""
	}
	job.out.warn(job.at("state"), fmt.Sprintf("%q is not running or suspended; left out", s))
	return ""
}

// redeployNonce is a savepointRedeployNonce flinkfsm takes: one with the savepoint it redeploys from.
// The Apache operator reads the pair only when the nonce changes (its blue/green abort sets a nonce
// on its own), flinkfsm's API at every apply: a nonce without its path is left out, named.
func redeployNonce(job *fields, nonce v1beta1.Nonce, path string) v1beta1.Nonce {
	if nonce != "" && path == "" {
		job.out.warn(job.at("savepointRedeployNonce"), "without an initialSavepointPath to redeploy from, which flinkfsm's API asks for with it; left out")
		return ""
	}
	return nonce
}
