package flinkapplication

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// refuse makes every create of the resource fail with err. It counts the attempts by object, as a
// pass creates a cluster's objects side by side.
func (w *world) refuse(resource string, err error) *attemptCount {
	attempts := &attemptCount{byName: map[string]int{}}
	w.kube.PrependReactor("create", resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
		obj, _ := meta.Accessor(a.(k8stesting.CreateAction).GetObject())
		attempts.mu.Lock()
		defer attempts.mu.Unlock()
		attempts.byName[obj.GetName()]++
		return true, nil, err
	})
	return attempts
}

type attemptCount struct {
	mu     sync.Mutex
	byName map[string]int
}

// each is how often every object was sent, if that is the same for all of them; -1 if not.
func (a *attemptCount) each() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, v := range a.byName {
		if n != 0 && v != n {
			return -1
		}
		n = v
	}
	return n
}

// The API server refuses an object that is wrong in itself with 422 or 400, and will refuse it
// again: the deploy fails at once with the server's message instead of after every retry.
func TestObjectsTheAPIServerRefusesFailTheDeployAtOnce(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, "wc-0123abcd", field.ErrorList{
		field.Invalid(field.NewPath("metadata", "name"), "wc-0123abcd", "must be no more than 63 characters")})
	badRequest := apierrors.NewBadRequest(`Deployment in version "v1" cannot be handled: quantities must match the regular expression`)
	tests := []struct {
		name, resource string
		err            error
		want           string
	}{
		{"a Service name the server refuses (422)", "services", invalid, "must be no more than 63 characters"},
		{"a Deployment the server cannot read (400)", "deployments", badRequest, "quantities must match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			attempts := w.refuse(tt.resource, tt.err)
			w.create(wordcount("wc"))
			_, err := w.reconcile("wc")
			require.NoError(t, err)
			got := w.get("wc")
			require.Equal(t, v1beta1.PhaseDeployFailed, got.Status.Phase, "reason %q", got.Status.Reason)
			assert.Contains(t, got.Status.Reason, tt.want, "the API server's message")
			assert.Equal(t, 1, attempts.each(), "a refused object is not sent again")
		})
	}
}

// Errors that may pass next time are still retried.
func TestPassingKubernetesErrorsAreRetried(t *testing.T) {
	w := newWorld(t)
	attempts := w.refuse("deployments", apierrors.NewInternalError(fmt.Errorf("etcdserver: request timed out")))
	w.create(wordcount("wc"))
	for i := 0; i < 2; i++ {
		_, err := w.reconcile("wc")
		require.NoError(t, err)
		w.clock.Step(maxStep)
	}
	got := w.get("wc")
	assert.NotEqual(t, v1beta1.PhaseDeployFailed, got.Status.Phase)
	assert.Equal(t, int32(2), got.Status.RetryCount)
	assert.Equal(t, 2, attempts.each())
}
