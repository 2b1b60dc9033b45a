package flink

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// What the probe and lifecycle hosts rule reads (Pod Security Standards baseline's Host Probes /
// Lifecycle Hooks, Kubernetes 1.34): the kubelet runs a container's probes and lifecycle hooks
// itself, from the node, so a host named there is reached with the node's network position (its
// link-local and loopback addresses, the control plane, other pods' node ports), not the pod's.
// Without a host they reach the pod's own address, which is all a Flink pod needs.

const handlerHostRefusal = "probes and lifecycle hooks may not name a host: the kubelet would connect to it from the node (leave host unset for the pod's own address)"

// hostHandlers are a container's handlers the kubelet runs, in the order the probe and lifecycle
// hosts rule names a field: the probes, then the lifecycle hooks. Each may connect by HTTP or TCP.
var hostHandlers = []struct {
	path    string
	actions func(c *corev1.Container) (*corev1.HTTPGetAction, *corev1.TCPSocketAction)
}{
	{"livenessProbe", func(c *corev1.Container) (*corev1.HTTPGetAction, *corev1.TCPSocketAction) {
		return probeActions(c.LivenessProbe)
	}},
	{"readinessProbe", func(c *corev1.Container) (*corev1.HTTPGetAction, *corev1.TCPSocketAction) {
		return probeActions(c.ReadinessProbe)
	}},
	{"startupProbe", func(c *corev1.Container) (*corev1.HTTPGetAction, *corev1.TCPSocketAction) {
		return probeActions(c.StartupProbe)
	}},
	{"lifecycle.postStart", func(c *corev1.Container) (*corev1.HTTPGetAction, *corev1.TCPSocketAction) {
		if c.Lifecycle == nil {
			return nil, nil
		}
		return hookActions(c.Lifecycle.PostStart)
	}},
	{"lifecycle.preStop", func(c *corev1.Container) (*corev1.HTTPGetAction, *corev1.TCPSocketAction) {
		if c.Lifecycle == nil {
			return nil, nil
		}
		return hookActions(c.Lifecycle.PreStop)
	}},
}

func probeActions(p *corev1.Probe) (*corev1.HTTPGetAction, *corev1.TCPSocketAction) {
	if p == nil {
		return nil, nil
	}
	return p.HTTPGet, p.TCPSocket
}

func hookActions(h *corev1.LifecycleHandler) (*corev1.HTTPGetAction, *corev1.TCPSocketAction) {
	if h == nil {
		return nil, nil
	}
	return h.HTTPGet, h.TCPSocket
}

// handlerHostField is the first host a container's probes and lifecycle hooks name, as its path in
// the container, or "".
func handlerHostField(c *corev1.Container) string {
	for _, h := range hostHandlers {
		http, tcp := h.actions(c)
		switch {
		case http != nil && http.Host != "":
			return h.path + ".httpGet.host"
		case tcp != nil && tcp.Host != "":
			return h.path + ".tcpSocket.host"
		}
	}
	return ""
}

// handlerHostFieldCEL is handlerHostField in CEL, of a container x.
func handlerHostFieldCEL(x string) string {
	var branches []string
	for _, h := range hostHandlers {
		for _, action := range []string{"httpGet", "tcpSocket"} {
			field := h.path + "." + action + ".host"
			branches = append(branches, fmt.Sprintf("%s && %s.%s != '' ? '%s'", presentPath(x, field), x, field, field))
		}
	}
	return "(" + strings.Join(branches, " :\n") + " : '')"
}
