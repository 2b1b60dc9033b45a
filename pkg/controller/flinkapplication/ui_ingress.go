package flinkapplication

import (
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// ensureUIIngress makes the application's Flink UI Ingress what its spec (or the operator's
// ingressUrlFormat) asks for (clusters.EnsureUIIngress). An Ingress the policy or the API server
// refuses is the Ingress's failure, never the job's: it comes back as refusal, which the Running
// phase reports (reportUIIngress), and err is left for what a retry may fix.
func ensureUIIngress(rc *Context) (refusal string, err error) {
	want, err := flink.UIIngress(rc.App, clusters.UIIngressPolicy(rc.Config))
	if err != nil {
		refusal, want = err.Error(), nil
	}
	ingress, refusal, events, err := clusters.EnsureUIIngress(rc, rc.Writer(), want, rc.Ingress, refusal, rc.Config.Ingress.AllowedClasses)
	rc.Ingress = ingress
	rc.Announce(events)
	return refusal, stepError(err)
}

// showUIURLs writes where users find the Flink UI through its Ingress, as the Lyft operator did:
// clusterStatus.clusterOverviewURL and jobStatus.jobOverviewURL; empty without an Ingress.
func showUIURLs(rc *Context) {
	cs, js := &rc.App.Status.ClusterStatus, &rc.App.Status.JobStatus
	cs.ClusterOverviewURL, js.JobOverviewURL = "", ""
	if base := flink.UIURL(rc.Ingress); base != "" {
		cs.ClusterOverviewURL = base + "/#/overview"
		if js.JobID != "" {
			js.JobOverviewURL = base + "/#/jobs/" + js.JobID
		}
	}
}
