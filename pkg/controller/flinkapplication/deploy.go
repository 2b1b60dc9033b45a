package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
)

// handleDeploy starts a deploy of the current spec (New and Updating): it checks the spec can be
// rendered, records the target, and creates its cluster. Dual creates it beside the live one; Single
// first stops the live job and replaces the cluster. A suspended spec deploys nothing.
func handleDeploy(rc *Context) Outcome {
	st := &rc.App.Status
	if msg := unsupported(rc.App); msg != "" {
		recordTarget(rc)
		return rc.DeployFailed("UnsupportedSpec", msg)
	}
	st.DeploymentMode = deploymentMode(rc.App)
	if err := applicationSpecError(rc); err != nil {
		recordTarget(rc)
		return rc.DeployFailed("InvalidSpec", err.Error())
	}
	if err := podPolicyError(rc); err != nil {
		if jobs.IsRetryable(err) {
			return failed(err)
		}
		recordTarget(rc)
		return rc.DeployFailed("PodPolicy", err.Error())
	}
	if rc.Settings.Suspend {
		if err := rc.EnsureFinalizer(); err != nil {
			return failed(err)
		}
		return rc.SuspendJob()
	}
	if msg := kindpass.NamesakesHAData(rc.Pass); msg != "" {
		// Nothing is recorded of this spec: its cluster id stays the namesake's, never this object's.
		return rc.DeployFailed("HADataOfAnotherObject", msg)
	}
	_, jobID := jobstate.LiveJob(&st.JobOwnerStatus)
	single := deploymentMode(rc.App) == v1beta1.DeploymentModeSingle
	if single && jobID != "" {
		if err := rc.EnsureFinalizer(); err != nil {
			return failed(err)
		}
		// One cluster only: the job stops before its cluster is replaced.
		recordTarget(rc)
		return rc.StopLiveJob("SpecChanged", "deploymentMode Single replaces the cluster")
	}
	recordTarget(rc)
	if blueGreen(rc.App) {
		jobstate.Candidate(&st.JobOwnerStatus).Version = nextVersion(st)
		st.TeardownHash = ""
	}
	if single {
		if _, err := rc.DeleteClustersExcept(rc.Hash); err != nil {
			return failed(err)
		}
	}
	// The finalizer, the cluster and the stable Service are independent requests, sent side by side:
	// one after another they kept the pass, and its worker, twice as long (a Service create waits
	// for its cluster IP). The finalizer still comes before any job runs.
	sendFinalizer, recordFinalizer := rc.FinalizerAdding()
	steps := []func() error{sendFinalizer, func() error { return createCluster(rc, flink.OwnerFromApplication(rc.App), rc.Hash) }}
	if jobstate.LiveCluster(&st.JobOwnerStatus) == "" || single {
		// The stable Service exists from the first deploy on, so the UI has one address.
		steps = append(steps, func() error { return pointGenericService(rc, rc.Hash) })
	}
	err := allAtOnce(steps)
	recordFinalizer()
	if err != nil {
		return failed(err)
	}
	what := "creating Flink cluster " + flink.VersionedServiceName(rc.App, rc.Hash)
	if jobstate.LiveCluster(&st.JobOwnerStatus) != "" && !single && rc.Clusters[jobstate.LiveCluster(&st.JobOwnerStatus)] != nil && jobstate.LiveCluster(&st.JobOwnerStatus) != rc.Hash {
		what += fmt.Sprintf(" beside %s", flink.VersionedServiceName(rc.App, jobstate.LiveCluster(&st.JobOwnerStatus)))
	}
	return moveTo(PhaseClusterStarting, "ClusterCreated", what)
}

// unsupported names what this operator version cannot deploy yet, so the user reads why instead of
// watching an application that never starts.
func unsupported(app *v1beta1.FlinkApplication) string {
	m := deploymentMode(app)
	switch m {
	case v1beta1.DeploymentModeDual, v1beta1.DeploymentModeSingle, v1beta1.DeploymentModeBlueGreen:
	default:
		return fmt.Sprintf("deploymentMode %s is not supported; use Dual, Single or BlueGreen", m)
	}
	// Single and Dual differ only in how the next update runs, so switching between them is safe;
	// BlueGreen keeps two versions' records and objects that the others do not.
	if was := app.Status.DeploymentMode; was != "" && was != m && (was == v1beta1.DeploymentModeBlueGreen || m == v1beta1.DeploymentModeBlueGreen) {
		return fmt.Sprintf("deploymentMode cannot change from %s to %s", was, m)
	}
	return ""
}

// The checks a spec passes before anything of its deploy is created. The CRDs' schema and CEL
// rules refuse most nonsense at apply time; these catch what CEL cannot read (flinkConfig) and
// objects stored before a rule existed, so that they end in DeployFailed naming the field instead of
// a cluster that never starts.

// applicationSpecError names the first field of a FlinkApplication's spec that cannot deploy: its
// cluster must render, and its job must be able to run as asked.
func applicationSpecError(rc *Context) error {
	if _, err := flink.RenderCluster(rc.App, rc.Hash, ""); err != nil {
		return err
	}
	return flink.CheckJob(rc.App)
}

// clusterRefusal is why no object may be created from owner's spec now (clusters.PodPolicy.Refusal).
func clusterRefusal(rc *Context, owner flink.ClusterOwner) error {
	return stepError(rc.PodPolicy.Refusal(rc, rc.Meta.Namespace, owner))
}

// podPolicyError applies the pod policy its Namespace's annotations set (clusters.PodPolicy). It is
// read at each deploy, not each pass, through the Namespace cache.
func podPolicyError(rc *Context) error { return podPolicyErrorOf(rc, rc.ClusterOwner) }

// podPolicyErrorOf is podPolicyError for the cluster owner given: the object as its spec is, or as
// a deployment record has it.
func podPolicyErrorOf(rc *Context, owner flink.ClusterOwner) error {
	return stepError(rc.PodPolicy.Check(rc, rc.Meta.Namespace, owner))
}
