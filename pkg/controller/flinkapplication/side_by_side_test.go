package flinkapplication

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A first deploy's writes do not depend on one another: the finalizer, both Deployments and both
// Services are sent side by side, so a pass takes as long as the slowest of them, not their sum.
// Every request is held until all five have arrived; sent one after another, each would wait alone
// until the test gives up on it. (The holding happens before the fake clientset, which serialises
// the requests it is sent.)
func TestAFirstDeploySendsItsWritesSideBySide(t *testing.T) {
	w := newWorld(t)
	const want = 5 // finalizer, JobManager, TaskManager, the cluster's Service, the application's Service
	var mu sync.Mutex
	arrived, all := 0, make(chan struct{})
	hold := func() {
		mu.Lock()
		arrived++
		if arrived == want {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-time.After(2 * time.Second):
		}
	}
	w.env.Kube = holdingKube{w.kube, hold}
	w.apps.PrependReactor("patch", "flinkapplications", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "" {
			hold()
		}
		return false, nil, nil
	})
	w.create(wordcount("wc"))
	began := time.Now()
	_, err := w.reconcile("wc")
	require.NoError(t, err)
	assert.Less(t, time.Since(began), time.Second, "the pass waited for requests sent one after another")
	got := w.get("wc")
	assert.Equal(t, v1beta1.PhaseClusterStarting, got.Status.Phase)
	assert.Contains(t, got.Finalizers, Finalizer)
	services, err := w.kube.CoreV1().Services(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, services.Items, 2)
}

// holdingKube calls hold before each Deployment or Service create it passes on.
type holdingKube struct {
	*kubefake.Clientset
	hold func()
}

func (k holdingKube) AppsV1() appsv1client.AppsV1Interface {
	return holdingApps{k.Clientset.AppsV1(), k.hold}
}

func (k holdingKube) CoreV1() corev1client.CoreV1Interface {
	return holdingCore{k.Clientset.CoreV1(), k.hold}
}

type holdingApps struct {
	appsv1client.AppsV1Interface
	hold func()
}

func (a holdingApps) Deployments(namespace string) appsv1client.DeploymentInterface {
	return holdingDeployments{a.AppsV1Interface.Deployments(namespace), a.hold}
}

type holdingDeployments struct {
	appsv1client.DeploymentInterface
	hold func()
}

func (d holdingDeployments) Create(ctx context.Context, obj *appsv1.Deployment, opts metav1.CreateOptions) (*appsv1.Deployment, error) {
	d.hold()
	return d.DeploymentInterface.Create(ctx, obj, opts)
}

type holdingCore struct {
	corev1client.CoreV1Interface
	hold func()
}

func (c holdingCore) Services(namespace string) corev1client.ServiceInterface {
	return holdingServices{c.CoreV1Interface.Services(namespace), c.hold}
}

type holdingServices struct {
	corev1client.ServiceInterface
	hold func()
}

func (s holdingServices) Create(ctx context.Context, obj *corev1.Service, opts metav1.CreateOptions) (*corev1.Service, error) {
	s.hold()
	return s.ServiceInterface.Create(ctx, obj, opts)
}
