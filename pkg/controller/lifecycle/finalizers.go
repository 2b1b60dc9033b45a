package lifecycle

import (
	"encoding/json"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// EnsureFinalizer adds the finalizer, so that deleting the object passes through Deleting and
// its deleteMode.
func (p *Pass) EnsureFinalizer() error {
	send, record := p.FinalizerAdding()
	if send == nil {
		return nil
	}
	err := send()
	record()
	return err
}

// FinalizerAdding is EnsureFinalizer in two halves, so that its request can go beside a cluster's
// creates: send makes the request from the object as it is now, and record, called once send and
// whatever ran beside it are done, writes the result into the working copy. send is nil when the finalizer is
// there already.
func (p *Pass) FinalizerAdding() (send func() error, record func()) {
	if HasFinalizer(p.Meta) {
		return nil, func() {}
	}
	return p.finalizersWrite(append(append([]string(nil), p.Meta.Finalizers...), Finalizer))
}

// RemoveFinalizer lets the object go: its deletion dealt with its job and clusters.
func (p *Pass) RemoveFinalizer() error {
	var keep []string
	for _, f := range p.Meta.Finalizers {
		if f != Finalizer {
			keep = append(keep, f)
		}
	}
	if len(keep) == len(p.Meta.Finalizers) {
		return nil
	}
	if err := p.patchFinalizers(keep); err != nil {
		return err
	}
	p.CheckpointRecords().Forget()
	return nil
}

func (p *Pass) patchFinalizers(finalizers []string) error {
	send, record := p.finalizersWrite(finalizers)
	err := send()
	record()
	return err
}

// finalizersWrite sets the object's finalizers to these, if its resourceVersion is still the one
// the working copy holds (see FinalizerAdding for the halves).
func (p *Pass) finalizersWrite(finalizers []string) (send func() error, record func()) {
	if finalizers == nil {
		finalizers = []string{}
	}
	patch, _ := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{
		"finalizers": finalizers, "resourceVersion": p.Meta.ResourceVersion,
	}})
	var updated metav1.Object
	var gone bool
	send = func() error {
		if err := p.MayAct(); err != nil {
			return err
		}
		obj, err := p.Patch(patch)
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
			p.Meta.Finalizers = finalizers
		case updated != nil:
			p.Meta.Finalizers = updated.GetFinalizers()
			p.Meta.ResourceVersion = updated.GetResourceVersion()
		}
	}
	return send, record
}
