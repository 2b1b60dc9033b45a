package clusters

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// The operator acts on the JobManager it created, at the address it chose: the cluster's headless
// Service, named after the cluster (flink.VersionedServiceNameOf). That Service lives in the
// tenant's namespace, and the tenant may edit it: as an ExternalName for another team's JobManager
// it would have the operator read that team's jobs as its own, and dispose of savepoints, submit
// jobs and upload jars there. So no call, read or act, goes to a JobManager through a Service
// that does not route as the operator rendered it (controlled by the object, of type ClusterIP,
// without an external name, with the JobManager pods' selector: flink.JobManagerServiceProblem),
// nor through one that did not within the last RouteSettle, while DNS may still answer its name
// as the tenant had it.
// Such a call fails unsent, as a JobManager that does not answer: nothing is known of the job, so
// nothing is started again or given up on its account, and the object waits (its phase deadline
// still runs). A Service the object controls is put back as rendered; the pass says which and why
// (an Event, and the Ready condition).
//
// Why a check of the Service rather than calls to an address read from it: the Service is
// headless, so it has no cluster IP to call, and the operator's other URL modes (the API server's
// service proxy, a URL template) route by the Service's name too. What the check leaves open: a
// change of the Service in the moment between the cache's last look at it and a call (the informer
// lags it by milliseconds), and EndpointSlices written by hand beside a Service with the operator's
// selector (which Kubernetes' own roles do not let a namespace's editors write).

// RouteSettle is how long after a cluster's Service was last seen routing elsewhere no call goes
// through it, though it is the operator's again: cluster DNS may still answer its name as the
// tenant had it for as long as it caches an answer (CoreDNS's cache keeps one 30 s at most by
// default).
const RouteSettle = 30 * time.Second

// Routes remember the JobManager Services last seen routing elsewhere, by namespace/name, for
// RouteSettle. They hold only Services seen so within that time: at most those tampered with in
// the last 30 seconds. The zero value is ready.
type Routes struct {
	mu   sync.Mutex
	seen map[string]refusedService
}

type refusedService struct {
	at      time.Time
	problem string
}

// Note remembers that the Service was seen routing elsewhere now, and forgets those that settled.
func (m *Routes) Note(service, problem string, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[string]refusedService{}
	}
	for name, r := range m.seen {
		if now.Sub(r.at) >= RouteSettle {
			delete(m.seen, name)
		}
	}
	m.seen[service] = refusedService{at: now, problem: problem}
}

// recent is what was last seen wrong with the Service, if that was less than RouteSettle ago.
func (m *Routes) recent(service string, now time.Time) (refusedService, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.seen[service]
	if !ok || now.Sub(r.at) >= RouteSettle {
		return refusedService{}, false
	}
	return r, true
}

// RouteRefusal says why no call goes to a cluster's JobManager. Tampered is set when its Service
// was seen routing elsewhere (now or within RouteSettle), not merely missing.
type RouteRefusal struct {
	Service, Problem string
	Tampered         bool
}

func (r *RouteRefusal) Error() string {
	return fmt.Sprintf("no call goes to the JobManager through Service %s: it %s", r.Service, r.Problem)
}

// Check is nil when the operator may call the JobManager of the owner's cluster with this hash,
// svc being that cluster's Service as the pass observed it (nil when absent); otherwise why it may
// not. It is read from the pass's goroutines, and writes nothing but the memory, which locks.
func (m *Routes) Check(owner flink.ClusterOwner, hash string, svc *corev1.Service, now time.Time) *RouteRefusal {
	name := owner.Namespace + "/" + flink.VersionedServiceNameOf(owner.Name, hash)
	if problem := owner.JobManagerServiceProblem(svc, hash); problem != "" {
		// A Service that is missing, or not the object's, may only not exist yet (or any more).
		tampered := svc != nil
		if tampered {
			m.Note(name, problem, now)
		}
		return &RouteRefusal{Service: name, Problem: problem, Tampered: tampered}
	}
	if r, ok := m.recent(name, now); ok {
		return &RouteRefusal{Service: name, Tampered: true,
			Problem: fmt.Sprintf("was seen %s ago routing elsewhere (%s), and DNS may still answer its name so until it has been "+
				"as the operator renders it for %s", now.Sub(r.at).Round(time.Second), r.problem, RouteSettle)}
	}
	return nil
}

// ReplaceJobManagerService deletes the cluster's Service as observed (have, this very object, by
// its UID) and creates the one the operator renders: a Service made an ExternalName and back cannot
// be made headless again in place. A Service held by a finalizer is still there: the create fails,
// and the next pass tries again, the cluster refused meanwhile.
func ReplaceJobManagerService(ctx context.Context, w Writer, owner flink.ClusterOwner, hash string, have *corev1.Service) (*corev1.Service, error) {
	if err := w.mayAct(); err != nil {
		return nil, err
	}
	services := w.Kube.CoreV1().Services(w.Namespace)
	opts := metav1.DeleteOptions{}
	if have.UID != "" {
		uid := have.UID
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	if err := services.Delete(ctx, have.Name, opts); err != nil && !apierrors.IsNotFound(err) {
		return nil, KubeError("DeleteJobManagerService", err)
	}
	created, err := services.Create(ctx, owner.RenderJobManagerService(hash), metav1.CreateOptions{FieldManager: w.FieldManager})
	if err != nil {
		return nil, KubeError("CreateJobManagerService", err)
	}
	return created, nil
}
