package clusters

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// After kubectl flink migrate, the Apache operator's stopped JobManager keeps a Service of the
// deployment's name, which is the FlinkApplication's stable Service's: the operator neither takes
// it over nor says only "not in the cache yet", for ever; it names whose it is and what to do.
func TestAStableServiceNameHeldByAnotherObjectIsNamedNotTakenOver(t *testing.T) {
	ctx := context.Background()
	app := &v1beta1.FlinkApplication{ObjectMeta: metav1.ObjectMeta{Name: "wc", Namespace: "team", UID: "wc-uid"}}
	want := flink.RenderGenericService(app, "0123abcd")
	apache := want.DeepCopy()
	apache.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "wc", UID: "apache-jm", Controller: ptr(true)}}
	apache.Spec.Selector = map[string]string{"app": "wc", "component": "jobmanager"}
	kube := fake.NewSimpleClientset(apache)
	w, _ := testWriter(kube)

	_, err := PointService(ctx, w, want, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Deployment wc")
	assert.Contains(t, err.Error(), "never takes over")
	got, _ := kube.CoreV1().Services("team").Get(ctx, "wc", metav1.GetOptions{})
	assert.Equal(t, apache.Spec.Selector, got.Spec.Selector, "the other object's Service is untouched")

	ours := want.DeepCopy()
	kube = fake.NewSimpleClientset(ours)
	w, _ = testWriter(kube)
	_, err = PointService(ctx, w, want, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not in the cache yet", "the application's own, read before the cache has it")
}

func ptr[T any](v T) *T { return &v }
