package watch

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	appfake "github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned/fake"

	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

// startWatch runs a Watch of all namespaces over fake clientsets until the test ends, and returns
// once every informer of the Kubernetes clientset watches: the fake clientsets do not replay what
// happened between an informer's list and its watch.
func startWatch(t *testing.T) (*Watch, *kubefake.Clientset) {
	kube, apps := kubefake.NewClientset(), appfake.NewSimpleClientset()
	var mu sync.Mutex
	watches := 0
	kube.PrependWatchReactor("*", func(k8stesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		watches++
		return false, nil, nil
	})
	w := New(Config{Kube: kube, Apps: apps, Enqueue: func(string, string, string) {},
		Echo:   func(string, metav1.Object, metav1.Object) bool { return false },
		Synced: func(string, cache.InformerSynced) {}})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w.Start(ctx)
	// Deployments, Services, pods, UI Ingresses, logging ConfigMaps and Flink's HA ConfigMaps.
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return watches >= 6
	}, 10*time.Second, time.Millisecond, "informers watching")
	return w, kube
}

// Attacks on what the operator caches of objects a tenant writes.

// The threat model lets a tenant create ConfigMaps in its namespace, and label them as it likes.
// The operator caches the ConfigMaps that carry its app label (flink-app) for the logging
// ConfigMaps it owns, of which it reads only the name, labels and owner. A tenant's ConfigMap that
// takes the label must not cost the operator its data, up to 1 MiB each, for as long as it exists:
// what is cached of it is its metadata.
func TestATenantsConfigMapWithTheOperatorsLabelIsCachedWithoutItsData(t *testing.T) {
	w, kube := startWatch(t)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "blob", Namespace: ns, Labels: map[string]string{k8.AppLabel: "anything"}},
		Data:       map[string]string{"blob": strings.Repeat("x", 512<<10)},
	}
	_, err := kube.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{})
	require.NoError(t, err)
	l := w.Listers().byNamespace[metav1.NamespaceAll]
	require.NotNil(t, l)
	var cached *corev1.ConfigMap
	require.Eventually(t, func() bool {
		obj, ok, err := l.configMaps.GetByKey(ns + "/" + cm.Name)
		if err == nil && ok {
			cached = obj.(*corev1.ConfigMap)
		}
		return cached != nil
	}, 5*time.Second, time.Millisecond)
	size := 0
	for k, v := range cached.Data {
		size += len(k) + len(v)
	}
	assert.Less(t, size, 1<<10, "bytes of a tenant's ConfigMap's data the operator keeps in its cache")
}
