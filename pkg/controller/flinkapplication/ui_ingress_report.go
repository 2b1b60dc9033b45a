package flinkapplication

import (
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/flinkfsm/flinkfsm/pkg/printable"
)

// specAnnotationsRecord is the annotation in which the operator records, on the UI Ingress, the
// keys of the annotations it set from the spec: so that it takes off one the spec no longer sets
// (a merge patch leaves a key it does not name), and leaves alone those an ingress controller
// writes. Its size is bounded by the spec's annotations, which the CRD bounds.
const specAnnotationsRecord = "flinkfsm.io/spec-annotations"

// ingressRefused starts the status reason of a refused Ingress.
const ingressRefused = "no Ingress for the Flink UI: "

// maxIngressRefusal bounds what a refusal says in status and in its Event: it may quote a key or a
// host of the spec, which the API server does not bound.
const maxIngressRefusal = 1024

// recordSpecAnnotations adds the record of the wanted annotations to the wanted Ingress.
func recordSpecAnnotations(want *networkingv1.Ingress) {
	keys := slices.Sorted(maps.Keys(want.Annotations))
	if want.Annotations == nil {
		want.Annotations = map[string]string{}
	}
	want.Annotations[specAnnotationsRecord] = strings.Join(keys, ",")
}

// staleAnnotations are the annotations on the Ingress the operator set and no longer wants: those
// its record names, or, on an Ingress without the record (an earlier operator's, which passed the
// spec's annotations through unchecked), every one, so that none it passed stays on after an upgrade.
func staleAnnotations(have, want *networkingv1.Ingress) []string {
	record, recorded := have.Annotations[specAnnotationsRecord]
	ours := slices.Collect(maps.Keys(have.Annotations))
	if recorded {
		ours = nil
		if record != "" {
			ours = strings.Split(record, ",")
		}
	}
	var stale []string
	for _, k := range ours {
		_, wanted := want.Annotations[k]
		_, on := have.Annotations[k]
		if on && !wanted {
			stale = append(stale, k)
		}
	}
	slices.Sort(stale)
	return stale
}

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
		rc.event(true, "IngressRefused", msg)
		rc.Machine.Reason = msg
	}
}
