package flinkapplication

import (
	"encoding/json"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// Finalizer holds an object until its deletion dealt with its job and clusters (lifecycle.Finalizer).
const Finalizer = lifecycle.Finalizer

// hasFinalizer tells whether the object carries the operator's finalizer (lifecycle.HasFinalizer).
func hasFinalizer(obj metav1.Object) bool { return lifecycle.HasFinalizer(obj) }

// ensureFinalizer adds the finalizer, so that deleting the application passes through Deleting and
// its deleteMode.
func ensureFinalizer(rc *Context) error {
	send, record := finalizerAdding(rc)
	if send == nil {
		return nil
	}
	err := send()
	record()
	return err
}

// finalizerAdding is ensureFinalizer in two halves, so that its request can go beside a cluster's
// creates: send makes the request from the object as it is now, and record, called once send and
// whatever ran beside it are done, writes the result into the working copy. send is nil when the finalizer is
// there already.
func finalizerAdding(rc *Context) (send func() error, record func()) {
	if hasFinalizer(rc.Meta) {
		return nil, func() {}
	}
	return finalizersWrite(rc, append(append([]string(nil), rc.Meta.Finalizers...), Finalizer))
}

func removeFinalizer(rc *Context) error {
	var keep []string
	for _, f := range rc.Meta.Finalizers {
		if f != Finalizer {
			keep = append(keep, f)
		}
	}
	if len(keep) == len(rc.Meta.Finalizers) {
		return nil
	}
	if err := patchFinalizers(rc, keep); err != nil {
		return err
	}
	rc.CheckpointRecords().Forget()
	return nil
}

func patchFinalizers(rc *Context, finalizers []string) error {
	send, record := finalizersWrite(rc, finalizers)
	err := send()
	record()
	return err
}

// finalizersWrite sets the object's finalizers to these, if its resourceVersion is still the one
// the working copy holds (see finalizerAdding for the halves).
func finalizersWrite(rc *Context, finalizers []string) (send func() error, record func()) {
	if finalizers == nil {
		finalizers = []string{}
	}
	patch, _ := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{
		"finalizers": finalizers, "resourceVersion": rc.Meta.ResourceVersion,
	}})
	var updated metav1.Object
	var gone bool
	send = func() error {
		if err := rc.MayAct(); err != nil {
			return err
		}
		obj, err := rc.kind.patch(rc, patch)
		if apierrors.IsNotFound(err) {
			gone = true
			return nil
		}
		if err != nil {
			return jobs.Retryable("PatchFinalizers", err)
		}
		updated = obj
		return nil
	}
	record = func() {
		switch {
		case gone:
			rc.Meta.Finalizers = finalizers
		case updated != nil:
			rc.Meta.Finalizers = updated.GetFinalizers()
			rc.Meta.ResourceVersion = updated.GetResourceVersion()
		}
	}
	return send, record
}
