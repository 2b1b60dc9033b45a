//go:build linux

package localcluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// NodeName is the name of the i-th fake node (0-based).
func NodeName(i int) string { return fmt.Sprintf("kwok-node-%d", i) }

// fakeNode is a node kwok pretends to run. Its capacity (see sizing.go) is far beyond anything a
// test or the benchmark asks for, so scheduling never fails for lack of resources.
func fakeNode(name string, size Sizing) *corev1.Node {
	huge := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(size.NodeCPU),
		corev1.ResourceMemory: resource.MustParse(size.NodeMemory),
		corev1.ResourcePods:   resource.MustParse(size.NodePods),
		// Manifests written for real clusters ask for ephemeral storage (the Apache operator's
		// examples do); a node without it would leave their pods unschedulable.
		corev1.ResourceEphemeralStorage: resource.MustParse(size.NodeMemory),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Annotations: map[string]string{
				kwokNodeAnnotation:             "fake",
				"node.alpha.kubernetes.io/ttl": "0",
			},
			Labels: map[string]string{
				corev1.LabelHostname: name,
				"type":               "kwok",
			},
		},
		Status: corev1.NodeStatus{Capacity: huge, Allocatable: huge.DeepCopy()},
	}
}

func createNodes(ctx context.Context, client kubernetes.Interface, n int, size Sizing) error {
	for i := range n {
		_, err := client.CoreV1().Nodes().Create(ctx, fakeNode(NodeName(i), size), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %s: %w", NodeName(i), err)
		}
	}
	return nil
}

// nodeSchedulable reports whether pods can land on node: Ready, and without the taints new or
// unhealthy nodes carry.
func nodeSchedulable(node *corev1.Node) bool {
	if node.Spec.Unschedulable {
		return false
	}
	for _, t := range node.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			return false
		}
	}
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitForNodes waits until all n fake nodes are schedulable. alive is polled so that a crashed
// component ends the wait with its log instead of a timeout.
func waitForNodes(ctx context.Context, client kubernetes.Interface, n int, alive func() error) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var state string
	for {
		if err := alive(); err != nil {
			return err
		}
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err == nil {
			var ready int
			var notes []string
			for i := range nodes.Items {
				node := &nodes.Items[i]
				if node.Annotations[kwokNodeAnnotation] != "fake" {
					continue
				}
				if nodeSchedulable(node) {
					ready++
				} else {
					notes = append(notes, describeNode(node))
				}
			}
			if ready >= n {
				return nil
			}
			state = fmt.Sprintf("%d/%d nodes schedulable; %s", ready, n, strings.Join(notes, "; "))
		} else {
			state = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for nodes: %w (%s)", ctx.Err(), state)
		case <-tick.C:
		}
	}
}

func describeNode(node *corev1.Node) string {
	var parts []string
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			parts = append(parts, "Ready="+string(cond.Status))
		}
	}
	for _, t := range node.Spec.Taints {
		parts = append(parts, "taint "+t.Key+":"+string(t.Effect))
	}
	if len(parts) == 0 {
		parts = append(parts, "no status yet")
	}
	return node.Name + " " + strings.Join(parts, ", ")
}
