package flinkapplication

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/flinkfsm/flinkfsm/pkg/controller/checkpointbook"
)

// bookPage is the page of the checkpoint book with this key, as the cluster has it; nil when it is
// not there or cannot be read.
func (e *Environment) bookPage(k checkpointbook.Key) *corev1.ConfigMap {
	page, err := e.Observer.CheckpointBookPage(k.Namespace, checkpointbook.PageName(k))
	if err != nil {
		return nil
	}
	return page
}
