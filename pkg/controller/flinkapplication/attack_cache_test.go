package flinkapplication

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

// Attacks on what the operator caches of objects a tenant writes.

// The threat model lets a tenant create ConfigMaps in its namespace, and label them as it likes.
// The operator caches the ConfigMaps that carry its app label (flink-app) for the logging
// ConfigMaps it owns, of which it reads only the name, labels and owner. A tenant's ConfigMap that
// takes the label must not cost the operator its data, up to 1 MiB each, for as long as it exists:
// what is cached of it is its metadata.
func TestATenantsConfigMapWithTheOperatorsLabelIsCachedWithoutItsData(t *testing.T) {
	f := newControllerFixture(t)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: f.n("blob"), Namespace: ns, Labels: map[string]string{k8.AppLabel: f.n("anything")}},
		Data:       map[string]string{"blob": strings.Repeat("x", 512<<10)},
	}
	_, err := f.kube.CoreV1().ConfigMaps(ns).Create(f.ctx, cm, metav1.CreateOptions{})
	require.NoError(t, err)
	l := f.env.Observer.(*listerObserver).byNamespace[metav1.NamespaceAll]
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
