package clusters

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testclock "k8s.io/utils/clock/testing"
)

// A fleet of one namespace deploying together reads its Namespace once, and a changed pod policy
// reaches the next deploy within NamespaceFreshFor.
func TestDeploysOfOneNamespaceReadItOnceAndFollowAChangeWithinSeconds(t *testing.T) {
	kube := fake.NewSimpleClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", Annotations: map[string]string{"policy": "a"}}})
	var reads atomic.Int32
	kube.PrependReactor("get", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
		reads.Add(1)
		return false, nil, nil
	})
	clk := testclock.NewFakeClock(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	var c NamespaceCache
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ns, err := c.Get(context.Background(), kube, clk, "team")
			assert.NoError(t, err)
			assert.Equal(t, "a", ns.Annotations["policy"])
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(1), reads.Load(), "concurrent deploys share one read, also those that looked just before it was kept")

	ns, err := kube.CoreV1().Namespaces().Get(context.Background(), "team", metav1.GetOptions{})
	require.NoError(t, err)
	ns.Annotations["policy"] = "b"
	_, err = kube.CoreV1().Namespaces().Update(context.Background(), ns, metav1.UpdateOptions{})
	require.NoError(t, err)
	clk.Step(NamespaceFreshFor)
	got, err := c.Get(context.Background(), kube, clk, "team")
	require.NoError(t, err)
	assert.Equal(t, "b", got.Annotations["policy"], "the change is read once the kept read is NamespaceFreshFor old")

	// A missing Namespace is an answer too; it is not asked again within NamespaceFreshFor.
	before := reads.Load()
	for range 3 {
		_, err := c.Get(context.Background(), kube, clk, "gone")
		assert.True(t, err != nil)
	}
	assert.Equal(t, before+1, reads.Load())
}
