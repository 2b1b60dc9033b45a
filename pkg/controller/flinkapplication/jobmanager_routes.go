package flinkapplication

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// The operator acts on the JobManager it created, at the address it chose: the cluster's headless
// Service, named after the cluster (flink.VersionedServiceNameOf). That Service lives in the
// tenant's namespace, and the tenant may edit it: as an ExternalName for another team's JobManager
// it would have the operator read that team's jobs as its own, and dispose of savepoints, submit
// jobs and upload jars there. So no call, read or act, goes to a JobManager through a Service
// that does not route as the operator rendered it (controlled by the object, of type ClusterIP,
// without an external name, with the JobManager pods' selector: flink.JobManagerServiceProblem),
// nor through one that did not within the last routeSettle, while DNS may still answer its name
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

// routeSettle is how long after a cluster's Service was last seen routing elsewhere no call goes
// through it, though it is the operator's again: cluster DNS may still answer its name as the
// tenant had it for as long as it caches an answer (CoreDNS's cache keeps one 30 s at most by
// default).
const routeSettle = 30 * time.Second

// refusedServiceReason is the reason of the Event and of the Ready condition that say a cluster's
// Service was refused.
const refusedServiceReason = "JobManagerServiceRefused"

// routeMemory remembers the JobManager Services last seen routing elsewhere, by namespace/name, for
// routeSettle. It holds only Services seen so within that time: at most those tampered with in
// the last 30 seconds.
type routeMemory struct {
	mu   sync.Mutex
	seen map[string]refusedService
}

type refusedService struct {
	at      time.Time
	problem string
}

// note remembers that the Service was seen routing elsewhere now, and forgets those that settled.
func (m *routeMemory) note(service, problem string, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[string]refusedService{}
	}
	for name, r := range m.seen {
		if now.Sub(r.at) >= routeSettle {
			delete(m.seen, name)
		}
	}
	m.seen[service] = refusedService{at: now, problem: problem}
}

// recent is what was last seen wrong with the Service, if that was less than routeSettle ago.
func (m *routeMemory) recent(service string, now time.Time) (refusedService, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.seen[service]
	if !ok || now.Sub(r.at) >= routeSettle {
		return refusedService{}, false
	}
	return r, true
}

// routeRefusal says why no call goes to a cluster's JobManager. tampered is set when its Service
// was seen routing elsewhere (now or within routeSettle), not merely missing.
type routeRefusal struct {
	service, problem string
	tampered         bool
}

func (r *routeRefusal) Error() string {
	return fmt.Sprintf("no call goes to the JobManager through Service %s: it %s", r.service, r.problem)
}

// jobManagerRoute is nil when the operator may call the JobManager of the owner's cluster with this
// hash, c being what the pass observed of that cluster; otherwise why it may not. It is read from
// the pass's goroutines (jobs.Pass.Together), and writes nothing but the memory, which locks.
func (e *Environment) jobManagerRoute(owner flink.ClusterOwner, hash string, c *ClusterObjects, now time.Time) error {
	var svc *corev1.Service
	if c != nil {
		svc = c.Service
	}
	name := owner.Namespace + "/" + flink.VersionedServiceNameOf(owner.Name, hash)
	if problem := owner.JobManagerServiceProblem(svc, hash); problem != "" {
		// A Service that is missing, or not the object's, may only not exist yet (or any more).
		tampered := svc != nil
		if tampered {
			e.routes.note(name, problem, now)
		}
		return jobs.Retryable("JobManagerRoute", &routeRefusal{service: name, problem: problem, tampered: tampered})
	}
	if r, ok := e.routes.recent(name, now); ok {
		return jobs.Retryable("JobManagerRoute", &routeRefusal{service: name, tampered: true,
			problem: fmt.Sprintf("was seen %s ago routing elsewhere (%s), and DNS may still answer its name so until it has been "+
				"as the operator renders it for %s", now.Sub(r.at).Round(time.Second), r.problem, routeSettle)})
	}
	return nil
}

// guardJobManagerServices runs before the pass reads anything of Flink. For each owned cluster whose
// Service routes elsewhere, it says so (an Event naming the Service and the field) and, when the
// object owns the cluster and its JobManager Deployment exists, puts back the Service the operator
// renders: deleted (this very object, by its UID) and created again, since a Service made an
// ExternalName and back cannot be made headless again in place. A session job only says so: its cluster's own pass
// repairs. The pass then shows the refusal in its Ready condition (showRefusedServices).
func guardJobManagerServices(rc *Context) {
	for _, hash := range sortedHashes(rc.Clusters) {
		c := rc.Clusters[hash]
		if c.Service == nil {
			continue
		}
		problem := rc.ClusterOwner.JobManagerServiceProblem(c.Service, hash)
		if problem == "" {
			continue
		}
		name := rc.Meta.Namespace + "/" + c.Service.Name
		rc.env.routes.note(name, problem, rc.Now)
		msg := fmt.Sprintf("Service %s of Flink cluster %s %s: no call goes to its JobManager through it", name, hash, problem)
		if rc.Owned != nil && c.JobManager != nil {
			if err := replaceJobManagerService(rc, hash, c.Service); err != nil {
				msg += fmt.Sprintf("; putting back the Service the operator renders failed: %v", err)
			} else {
				msg += "; it was replaced by the Service the operator renders"
			}
		}
		rc.event(true, refusedServiceReason, msg)
	}
}

// replaceJobManagerService deletes the cluster's Service as observed and creates the one the
// operator renders. A Service held by a finalizer is still there: the create fails, and the next
// pass tries again, the cluster refused meanwhile.
func replaceJobManagerService(rc *Context, hash string, have *corev1.Service) error {
	if err := rc.mayAct(); err != nil {
		return err
	}
	services := rc.env.Kube.CoreV1().Services(rc.Meta.Namespace)
	opts := metav1.DeleteOptions{}
	if have.UID != "" {
		uid := have.UID
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	if err := services.Delete(rc, have.Name, opts); err != nil && !apierrors.IsNotFound(err) {
		return kubeError("DeleteJobManagerService", err)
	}
	created, err := services.Create(rc, rc.ClusterOwner.RenderJobManagerService(hash), metav1.CreateOptions{FieldManager: fieldManager})
	if err != nil {
		return kubeError("CreateJobManagerService", err)
	}
	rc.Clusters[hash].Service = created
	return nil
}

// showRefusedServices makes the Ready condition say, after the pass summarized its status, that a
// cluster's Service was refused, naming it: whatever else the object waits on, nothing of its job
// can be known until that changes.
func showRefusedServices(rc *Context) {
	for _, hash := range sortedHashes(rc.Clusters) {
		err := rc.env.jobManagerRoute(rc.ClusterOwner, hash, rc.Clusters[hash], rc.Now)
		if r, ok := asRouteRefusal(err); ok && r.tampered {
			fsm.SetCondition(rc.Machine, metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionFalse,
				Reason: refusedServiceReason, ObservedGeneration: rc.Meta.Generation, Message: r.Error()}, rc.Now)
			return
		}
	}
}

func asRouteRefusal(err error) (*routeRefusal, bool) {
	var r *routeRefusal
	ok := errors.As(err, &r)
	return r, ok
}

// sortedHashes are the clusters' hashes in order, so that what a pass says of them is the same
// from one pass to the next.
func sortedHashes(clusters map[string]*ClusterObjects) []string {
	out := make([]string, 0, len(clusters))
	for hash := range clusters {
		out = append(out, hash)
	}
	sort.Strings(out)
	return out
}
