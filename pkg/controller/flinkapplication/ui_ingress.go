package flinkapplication

import (
	"strings"
	"unicode/utf8"

	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
	"github.com/flinkfsm/flinkfsm/pkg/printable"
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
	return refusal, lifecycle.StepError(err)
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

// ingressRefused starts the status reason of a refused Ingress.
const ingressRefused = "no Ingress for the Flink UI: "

// maxIngressRefusal bounds what a refusal says in status and in its Event: it may quote a key or a
// host of the spec, which the API server does not bound.
const maxIngressRefusal = 1024

// reportUIIngress says why the application has no Ingress for its UI, as Running finds it: in
// status.reason, and with a Warning Event when that says something new, so that a refusal is told
// once and not at every pass. The deploy phases leave it to Running: their own reasons replace it.
func reportUIIngress(rc *Context, refusal string) {
	if refusal == "" {
		if strings.HasPrefix(rc.Machine.Reason, ingressRefused) {
			rc.Machine.Reason = "the Flink UI's Ingress is no longer refused"
		}
		return
	}
	msg := printable.Text(ingressRefused + refusal)
	if len(msg) > maxIngressRefusal {
		cut := maxIngressRefusal
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	if rc.Machine.Reason != msg {
		rc.Event(true, "IngressRefused", msg)
		rc.Machine.Reason = msg
	}
}
