package watch

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/checkpointbook"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

// ns is the namespace of the tests' objects.
const ns = "jobs"

// checkpointBookPageForCache is the transform of the checkpoint book's informer.
var checkpointBookPageForCache = bookPageForCache(checkpointbook.ForCache)

// maxCachedObject is what a cached Deployment, Service or ConfigMap of a tenant's namespace may cost
// the operator, in its JSON form, whatever the tenant wrote into it: the labels, annotations,
// owner references, finalizers and data it does not read are not kept.
const maxCachedObject = 2 << 10

// tenantBloat fills an object's metadata with what any editor of the namespace may write to it:
// hundreds of labels and annotations, owner references and finalizers, about a MiB in all.
func tenantBloat(m *metav1.ObjectMeta) {
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	for i := 0; i < 500; i++ {
		m.Labels[fmt.Sprintf("tenant.example/label-%d", i)] = strings.Repeat("v", 63)
		m.Annotations[fmt.Sprintf("tenant.example/annotation-%d", i)] = strings.Repeat("a", 1000)
		m.Finalizers = append(m.Finalizers, fmt.Sprintf("tenant.example/finalizer-%d", i))
		m.OwnerReferences = append(m.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap",
			Name: fmt.Sprintf("owner-%d", i), UID: "uid"})
	}
	m.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{}}`)}}}
}

// megabyteOfData is a ConfigMap's data as large as the API server takes it.
func megabyteOfData() map[string]string {
	data := map[string]string{}
	for i := 0; i < 1000; i++ {
		data[fmt.Sprintf("key-%d", i)] = strings.Repeat("d", 1000)
	}
	return data
}

func jsonSize(t *testing.T, obj interface{}) int {
	b, err := json.Marshal(obj)
	require.NoError(t, err)
	return len(b)
}

var wcOwner = metav1.OwnerReference{APIVersion: "flink.k8s.io/v1beta1", Kind: "FlinkApplication", Name: "wc", UID: "wc-uid",
	Controller: func() *bool { b := true; return &b }()}

// A tenant may write ConfigMaps with the labels the operator selects on (its own app label, Flink's
// HA labels, the checkpoint book's), as large as the API server takes them. Each costs the operator
// a bounded amount: what it reads of one and no more.
func TestACachedConfigMapCostsABoundedAmountWhateverTheTenantWrites(t *testing.T) {
	t.Run("logging ConfigMap", func(t *testing.T) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: flink.LogConfigName("wc", "0123abcd"), Namespace: ns,
			Labels: map[string]string{k8.AppLabel: "wc", k8.HashLabel: "0123abcd"}, OwnerReferences: []metav1.OwnerReference{wcOwner}},
			Data: megabyteOfData(), BinaryData: map[string][]byte{"blob": make([]byte, 100<<10)}}
		tenantBloat(&cm.ObjectMeta)
		out, err := trimForCache(cm)
		require.NoError(t, err)
		kept := out.(*corev1.ConfigMap)
		assert.Less(t, jsonSize(t, kept), maxCachedObject)
		// What clusters.Group reads of it is still there.
		owned, _ := clusters.Group(flink.ClusterOwner{ObjectMeta: metav1.ObjectMeta{Name: "wc", Namespace: ns, UID: "wc-uid"},
			Kind: v1beta1.SchemeGroupVersion.WithKind("FlinkApplication")}, nil, nil, nil, []*corev1.ConfigMap{kept})
		require.NotNil(t, owned["0123abcd"])
		assert.Same(t, kept, owned["0123abcd"].LogConfig)
	})
	t.Run("HA ConfigMap", func(t *testing.T) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "wc-0123abcd-cluster-config-map", Namespace: ns,
			Labels: map[string]string{flink.FlinkObjectLabel: flink.FlinkObject, flink.HAClusterIDLabel: "wc-0123abcd"}},
			Data: megabyteOfData()}
		tenantBloat(&cm.ObjectMeta)
		out, err := haConfigMapMetadata(cm)
		require.NoError(t, err)
		kept := out.(*corev1.ConfigMap)
		assert.Less(t, jsonSize(t, kept), maxCachedObject)
		owner, hash, ok := flink.HAConfigMapCluster(kept)
		assert.True(t, ok)
		assert.Equal(t, "wc", owner)
		assert.Equal(t, "0123abcd", hash)
	})
	t.Run("a ConfigMap labelled as a page of the checkpoint book", func(t *testing.T) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tenant-notes", Namespace: ns,
			Labels: map[string]string{checkpointbook.Label: "true"}}, Data: megabyteOfData()}
		tenantBloat(&cm.ObjectMeta)
		out, err := checkpointBookPageForCache(cm)
		require.NoError(t, err)
		assert.Less(t, jsonSize(t, out), maxCachedObject, "not a page's name: nothing of its data")
	})
}

// A page of the checkpoint book keeps the entries the book reads (Read) and nothing else: no value
// past an entry's size, no key that is not a job's, no metadata beyond the page's name.
func TestACachedCheckpointBookPageKeepsOnlyEntries(t *testing.T) {
	k := checkpointbook.Key{Namespace: ns, Kind: v1beta1.FlinkApplicationKind, Name: "wc"}
	entry, err := json.Marshal(checkpointbook.Entry{JobID: "0123", Path: "s3://bucket/chk-7"})
	require.NoError(t, err)
	data := megabyteOfData()
	data[v1beta1.FlinkApplicationKind+".wc"] = string(entry)
	data[v1beta1.FlinkApplicationKind+".huge"] = strings.Repeat("x", 100<<10)
	page := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: checkpointbook.PageName(k), Namespace: ns,
		Labels: map[string]string{checkpointbook.Label: "true"}}, Data: data}
	tenantBloat(&page.ObjectMeta)
	out, err := checkpointBookPageForCache(page)
	require.NoError(t, err)
	kept := out.(*corev1.ConfigMap)
	got, ok := checkpointbook.Read(kept, k)
	require.True(t, ok)
	assert.Equal(t, "s3://bucket/chk-7", got.Path)
	assert.Equal(t, map[string]string{v1beta1.FlinkApplicationKind + ".wc": string(entry)}, kept.Data)
	assert.Less(t, jsonSize(t, kept), maxCachedObject)
}

// A tenant may also bloat the operator's own Deployments and Services in its namespace: each keeps
// only the labels, annotation, owner and selector a pass reads.
func TestACachedDeploymentOrServiceCostsABoundedAmountWhateverTheTenantWrites(t *testing.T) {
	n := int32(1)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "wc-0123abcd-jm", Namespace: ns,
		Labels:      map[string]string{k8.AppLabel: "wc", k8.HashLabel: "0123abcd", k8.ComponentLabel: "jobmanager"},
		Annotations: map[string]string{flink.RetainedCheckpointsAnnotation: "10"}, OwnerReferences: []metav1.OwnerReference{wcOwner}},
		Spec: appsv1.DeploymentSpec{Replicas: &n}}
	tenantBloat(&d.ObjectMeta)
	out, err := trimForCache(d)
	require.NoError(t, err)
	kd := out.(*appsv1.Deployment)
	assert.Less(t, jsonSize(t, kd), maxCachedObject)
	assert.Equal(t, map[string]string{flink.RetainedCheckpointsAnnotation: "10"}, kd.Annotations)
	assert.Equal(t, map[string]string{k8.AppLabel: "wc", k8.HashLabel: "0123abcd", k8.ComponentLabel: "jobmanager"}, kd.Labels)
	assert.Equal(t, []metav1.OwnerReference{wcOwner}, kd.OwnerReferences, "the controller, no other owner")

	d.Annotations[flink.RetainedCheckpointsAnnotation] = strings.Repeat("9", 200<<10)
	out, _ = trimForCache(d)
	assert.Less(t, jsonSize(t, out), maxCachedObject, "not a count: not kept")

	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "wc-0123abcd", Namespace: ns,
		Labels: map[string]string{k8.AppLabel: "wc", k8.HashLabel: "0123abcd"}, OwnerReferences: []metav1.OwnerReference{wcOwner}},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{k8.AppLabel: "wc"}}}
	tenantBloat(&s.ObjectMeta)
	for i := 0; i < 1000; i++ {
		s.Spec.Selector[fmt.Sprintf("tenant.example/selector-%d", i)] = strings.Repeat("s", 63)
	}
	out, err = trimForCache(s)
	require.NoError(t, err)
	ks := out.(*corev1.Service)
	assert.Less(t, jsonSize(t, ks), maxCachedObject)
	assert.Equal(t, map[string]string{k8.AppLabel: "wc", k8.HashLabel: "0123abcd"}, ks.Labels)
	assert.False(t, clusters.Selects(ks, map[string]string{k8.AppLabel: "wc"}), "a selector of other keys is not the operator's")
}
