package flinkapplication

import (
	"strings"
	"unicode/utf8"

	"github.com/flinkfsm/flinkfsm/pkg/printable"
)

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
