package flink

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The control-plane rule judges where a pod can land, not how it asked to. Control-plane nodes
// carry a NoSchedule taint (node-role.kubernetes.io/control-plane; node-role.kubernetes.io/master
// before Kubernetes 1.24) that keeps workloads off them: the scheduler places a pod on a node only
// if the pod tolerates every NoSchedule taint there. A pod that tolerates that taint may land on a
// control-plane node whatever else it says, since its node selector and node affinity can name the
// node by any label or field (kubernetes.io/hostname, matchFields on metadata.name): no reading of
// them can tell that it will not. So the rule refuses the toleration itself, in every layer that
// places a component's pods and in the pods the operator renders from them, and a pod that names its
// node (spec.nodeName, which only a template has), which passes over the scheduler and the taint.

// controlPlaneTaints are the keys of the control-plane nodes' NoSchedule taint.
var controlPlaneTaints = []string{"node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"}

const (
	controlPlaneRefusal = "pods may not tolerate the control-plane nodes' NoSchedule taint (node-role.kubernetes.io/control-plane or " +
		"node-role.kubernetes.io/master; a toleration without a key, or without an effect, tolerates it too), which lets them land on " +
		"control-plane nodes whatever their node selector or affinity says"
	nodeNameRefusal = "pods may not name their node, which passes over the scheduler and with it the control-plane nodes' taint"
)

// toleratesControlPlane tells whether a toleration tolerates the control-plane nodes' taint: it
// names its key or none (every key), and the effect NoSchedule or none (every effect). Its
// operator and value are not read, so that a cluster whose taint has a value is judged alike.
func toleratesControlPlane(t corev1.Toleration) bool {
	return (t.Key == "" || slices.Contains(controlPlaneTaints, t.Key)) && (t.Effect == "" || t.Effect == corev1.TaintEffectNoSchedule)
}

// tolerationCEL is toleratesControlPlane in CEL, of a toleration t.
var tolerationCEL = fmt.Sprintf("(!has(t.key) || t.key == null || t.key == '' || t.key in %s) &&\n"+
	"(!has(t.effect) || t.effect == null || t.effect == '' || t.effect == 'NoSchedule')", celList(controlPlaneTaints))

// placementSite is a layer that places the pods of a component: its path in the object, the CEL
// variable that holds it, and its tolerations.
type placementSite struct {
	path, variable string
	tolerations    func(o *ClusterOwner) []corev1.Toleration
}

func templateTolerations(t *corev1.PodTemplateSpec) []corev1.Toleration {
	if t == nil {
		return nil
	}
	return t.Spec.Tolerations
}

// placementSites are the layers of both components, in the order both layers of the policy name a
// field: the JobManager's Lyft fields and template, the cluster's template, the TaskManagers' Lyft
// fields and template. A toleration in any of them reaches the pods or is replaced by a later
// layer's (pod-templates.md, the merge): refusing each is what keeps the rendered pods free of it.
var placementSites = []placementSite{
	{"spec.jobManagerConfig", "jobManagerPlacement", func(o *ClusterOwner) []corev1.Toleration { return o.Spec.JobManagerConfig.Tolerations }},
	{"spec.jobManagerConfig.podTemplate.spec", "jobManagerPodSpec", func(o *ClusterOwner) []corev1.Toleration {
		return templateTolerations(o.Spec.JobManagerConfig.PodTemplate)
	}},
	{"spec.podTemplate.spec", "clusterPodSpec", func(o *ClusterOwner) []corev1.Toleration { return templateTolerations(o.Spec.PodTemplate) }},
	{"spec.taskManagerConfig", "taskManagerPlacement", func(o *ClusterOwner) []corev1.Toleration { return o.TaskManagerConfig.Tolerations }},
	{"spec.taskManagerConfig.podTemplate.spec", "taskManagerPodSpec", func(o *ClusterOwner) []corev1.Toleration {
		return templateTolerations(o.TaskManagerConfig.PodTemplate)
	}},
}

// controlPlaneTolerationField names the first toleration of the spec's placement layers that
// tolerates the control-plane nodes' taint, or "".
func controlPlaneTolerationField(o *ClusterOwner) string {
	for _, s := range placementSites {
		if i := slices.IndexFunc(s.tolerations(o), toleratesControlPlane); i >= 0 {
			return fmt.Sprintf("%s.tolerations[%d]", s.path, i)
		}
	}
	return ""
}

// controlPlaneTolerationFieldCEL is controlPlaneTolerationField in CEL.
func controlPlaneTolerationFieldCEL() string {
	var branches []string
	for _, s := range placementSites {
		list := "variables." + s.variable + ".tolerations"
		branches = append(branches, fmt.Sprintf("%s ?\n'%s.tolerations[' + %s + ']'", anyOf(list, "t", tolerationCEL), s.path, indexOf(list, "t", tolerationCEL)))
	}
	return strings.Join(branches, " :\n") + " : ''"
}

var controlPlaneRule = podRule{
	name: "control-plane nodes", annotation: AllowControlPlaneNodesAnnotation,
	check: func(o *ClusterOwner, p PodPolicy) string {
		if field := controlPlaneTolerationField(o); field != "" && !p.AllowControlPlaneNodes {
			return field + ": " + controlPlaneRefusal + relax(AllowControlPlaneNodesAnnotation)
		}
		return ""
	},
	variables: []celVariable{
		{"jobManagerPlacement", "has(object.spec.jobManagerConfig) ? object.spec.jobManagerConfig : {}"},
		{"taskManagerPlacement", "has(object.spec.taskManagerConfig) ? object.spec.taskManagerConfig : {}"},
		{"controlPlaneField", controlPlaneTolerationFieldCEL()},
	},
	expression:        "variables.allowControlPlaneNodes || variables.controlPlaneField == ''",
	messageExpression: "variables.controlPlaneField + " + cel(": "+controlPlaneRefusal+relax(AllowControlPlaneNodesAnnotation)),
	message:           "spec: " + controlPlaneRefusal + relax(AllowControlPlaneNodesAnnotation),
	// On the spec's pods, check has judged the tolerations already, so that their pod form adds only
	// the node name there. On the pods the operator renders, pod judges both.
	pod: func(t *corev1.PodTemplateSpec, p PodPolicy) string {
		switch {
		case p.AllowControlPlaneNodes:
		case t.Spec.NodeName != "":
			return "spec.nodeName: " + nodeNameRefusal + relax(AllowControlPlaneNodesAnnotation)
		default:
			if i := slices.IndexFunc(t.Spec.Tolerations, toleratesControlPlane); i >= 0 {
				return fmt.Sprintf("spec.tolerations[%d]: %s", i, controlPlaneRefusal) + relax(AllowControlPlaneNodesAnnotation)
			}
		}
		return ""
	},
	podOK: func(t string) string {
		return "variables.allowControlPlaneNodes || !(" + present(t+".spec.nodeName") + ") || " + t + ".spec.nodeName == ''"
	},
	podRefusal: func(string) string {
		return cel("spec.nodeName: " + nodeNameRefusal + relax(AllowControlPlaneNodesAnnotation))
	},
	podMessage: "spec.nodeName: " + nodeNameRefusal + relax(AllowControlPlaneNodesAnnotation),
	podNote:    "pods that name their node",
	crdFields:  []string{"nodeName"},
}
