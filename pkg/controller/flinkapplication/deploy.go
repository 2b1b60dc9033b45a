package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// handleDeploy starts a deploy of the current spec (New and Updating): it checks the spec can be
// rendered, records the target hash and creates the cluster beside any running one.
func handleDeploy(rc *Context) Outcome {
	st := &rc.App.Status
	if st.DeploymentMode == "" {
		st.DeploymentMode = deploymentMode(rc.App)
	}
	st.UpdatingHash = rc.Hash
	if msg := unsupported(rc.App); msg != "" {
		return deployFailed(rc, "UnsupportedSpec", msg)
	}
	if _, err := flink.RenderCluster(rc.App, rc.Hash); err != nil {
		return deployFailed(rc, "InvalidSpec", err.Error())
	}
	if err := ensureFinalizer(rc); err != nil {
		return failed(err)
	}
	if err := createCluster(rc, rc.Hash); err != nil {
		return failed(err)
	}
	if st.DeployHash == "" {
		// The stable Service exists from the first deploy on, so the UI has one address.
		if err := pointGenericService(rc, rc.Hash); err != nil {
			return failed(err)
		}
	}
	what := "creating Flink cluster " + flink.VersionedServiceName(rc.App, rc.Hash)
	if st.DeployHash != "" {
		what += fmt.Sprintf(" beside %s", flink.VersionedServiceName(rc.App, st.DeployHash))
	}
	return moveTo(v1beta1.PhaseClusterStarting, "ClusterCreated", what)
}

func deploymentMode(app *v1beta1.FlinkApplication) v1beta1.DeploymentMode {
	if app.Spec.DeploymentMode == "" {
		return v1beta1.DeploymentModeDual
	}
	return app.Spec.DeploymentMode
}

// unsupported names what this operator version cannot deploy yet, so the user reads why instead of
// watching an application that never starts.
func unsupported(app *v1beta1.FlinkApplication) string {
	switch m := deploymentMode(app); m {
	case v1beta1.DeploymentModeDual:
	default:
		return fmt.Sprintf("deploymentMode %s is not supported by this operator version yet; use Dual", m)
	}
	if app.Status.DeploymentMode != "" && app.Status.DeploymentMode != deploymentMode(app) {
		return fmt.Sprintf("deploymentMode cannot change from %s to %s", app.Status.DeploymentMode, deploymentMode(app))
	}
	return ""
}
