package clusters

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
)

// NamespaceFreshFor is how long a Namespace read for its pod policy serves later deploys. The
// admission policy in deploy/ applies a changed policy at once; the operator's own check, the
// fallback where that policy is not installed, follows it within this time.
const NamespaceFreshFor = 10 * time.Second

// NamespaceCache keeps the Namespaces the pod policy was read from for NamespaceFreshFor, and
// sends one read at a time per Namespace. A fleet applied at once deploys many applications of
// one Namespace together, and each deploy read it first: one more request per application, on the
// way to its cluster (50 to 300 ms each on a busy API server). A Namespace that is missing or may
// not be read is kept too: both are answers (the restricted policy applies).
type NamespaceCache struct {
	reads   singleflight.Group
	entries sync.Map // name → namespaceRead
}

type namespaceRead struct {
	ns  *corev1.Namespace
	err error
	at  time.Time
}

// Get reads a Namespace as the API server's GET answers it, at most NamespaceFreshFor old.
func (c *NamespaceCache) Get(ctx context.Context, kube kubernetes.Interface, clk clock.PassiveClock, name string) (*corev1.Namespace, error) {
	if r, ok := c.fresh(clk, name); ok {
		return r.ns, r.err
	}
	v, _, _ := c.reads.Do(name, func() (interface{}, error) {
		// A read that finished between the look above and this flight is used, not repeated.
		if r, ok := c.fresh(clk, name); ok {
			return r, nil
		}
		ns, err := kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		r := namespaceRead{ns: ns, err: err, at: clk.Now()}
		if err == nil || apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			c.entries.Store(name, r)
		}
		return r, nil
	})
	r := v.(namespaceRead)
	return r.ns, r.err
}

// fresh is the kept read of a Namespace while it is NamespaceFreshFor old at most.
func (c *NamespaceCache) fresh(clk clock.PassiveClock, name string) (namespaceRead, bool) {
	if v, ok := c.entries.Load(name); ok {
		if r := v.(namespaceRead); clk.Since(r.at) < NamespaceFreshFor {
			return r, true
		}
	}
	return namespaceRead{}, false
}
