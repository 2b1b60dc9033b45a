package clusters

import (
	"k8s.io/client-go/kubernetes"
)

// Writer makes the operator's writes of the objects of the clusters of one namespace.
type Writer struct {
	Kube kubernetes.Interface
	// Namespace is the namespace of the owner and its clusters.
	Namespace string
	// FieldManager names the writes in managedFields.
	FieldManager string
	// Fence is asked before the writes of each step: it says why this replica may not change
	// Kubernetes now (it lost its lease, another replica took the object over), nil while it may.
	// Its error is returned as it is. A nil Fence lets every write through.
	Fence func() error
}

func (w Writer) mayAct() error {
	if w.Fence == nil {
		return nil
	}
	return w.Fence()
}

// Event is what a write tells the users of the owner, for the caller to record on it.
type Event struct {
	Warning         bool
	Reason, Message string
}
