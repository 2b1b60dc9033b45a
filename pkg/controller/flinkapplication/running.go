package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// handleRunning watches the live job and starts an update when the spec changes. Clusters of earlier
// specs are removed here, once the job runs on the live one.
func handleRunning(rc *Context) Outcome {
	st := &rc.App.Status
	if rc.Hash != st.DeployHash && rc.Hash != st.FailedDeployHash {
		return moveTo(v1beta1.PhaseUpdating, "SpecChanged", fmt.Sprintf("spec changed (cluster hash %s -> %s)", st.DeployHash, rc.Hash))
	}
	if err := removeStaleClusters(rc); err != nil {
		return failed(err)
	}
	observeLiveJob(rc)
	return stay(0)
}

// handleDeployFailed rests after a failed deploy, watching whatever job still runs, until the spec
// changes. Going back to the running spec returns to Running without a redeploy.
func handleDeployFailed(rc *Context) Outcome {
	st := &rc.App.Status
	switch {
	case st.DeployHash != "" && rc.Hash == st.DeployHash:
		st.FailedDeployHash = ""
		return moveTo(v1beta1.PhaseRunning, "SpecRestored", "spec is back to the running one")
	case rc.Hash != st.FailedDeployHash && rc.Hash != st.DeployHash:
		return moveTo(v1beta1.PhaseUpdating, "SpecChanged", fmt.Sprintf("spec changed (cluster hash %s); deploying", rc.Hash))
	}
	if err := removeStaleClusters(rc); err != nil {
		return failed(err)
	}
	observeLiveJob(rc)
	return stay(0)
}

func removeStaleClusters(rc *Context) error {
	gone, err := deleteClustersExcept(rc, rc.App.Status.DeployHash)
	for _, h := range gone {
		rc.event(false, "ClusterDeleted", fmt.Sprintf("deleted Flink cluster %s-%s", rc.App.Name, h))
	}
	return err
}
