package flinkapplication

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessionjob"
)

// routedCalls records the calls that a Service routed to another cluster's JobManager.
type routedCalls struct {
	mu    sync.Mutex
	calls []string
}

func (r *routedCalls) add(call string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call)
}

func (r *routedCalls) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

// routeLikeDNS makes the operator's calls reach JobManagers as cluster DNS routes them: through the
// Service the URL names, and so, for an ExternalName Service, to the JobManager whose name it
// points at. It records each call that went elsewhere than the cluster the URL names.
func (w *world) routeLikeDNS() *routedCalls {
	routed := &routedCalls{}
	dns := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
		if len(parts) == 3 {
			svc, err := w.kube.CoreV1().Services(parts[0]).Get(context.Background(), parts[1], metav1.GetOptions{})
			if err == nil && svc.Spec.Type == corev1.ServiceTypeExternalName {
				target := strings.SplitN(svc.Spec.ExternalName, ".", 2)[0]
				routed.add(parts[1] + " -> " + target + ": " + r.Method + " /" + parts[2])
				parts[1] = target
			}
			r.URL.Path = "/" + strings.Join(parts, "/")
		}
		w.route(rw, r)
	}))
	w.t.Cleanup(dns.Close)
	w.env.FlinkURL = func(namespace, service string, _ int32) string { return dns.URL + "/" + namespace + "/" + service }
	return routed
}

// pointServiceAt turns a cluster's Service into an ExternalName Service for another name, as a
// tenant who may edit Services in its namespace can.
func (w *world) pointServiceAt(name, externalName string) {
	ctx := context.Background()
	svc, err := w.kube.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	require.NoError(w.t, err)
	svc.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: externalName}
	_, err = w.kube.CoreV1().Services(ns).Update(ctx, svc, metav1.UpdateOptions{})
	require.NoError(w.t, err)
}

// A tenant who turns its JobManager's Service into an ExternalName for another team's JobManager
// gets no call of the operator's sent there: no read (whose answers would decide about its job) and
// no act (a savepoint, a submission, a disposal). Its own job is kept as it was, the operator puts
// back the Service it rendered, says which Service and why, and carries on with the job once the
// Service has been its own for long enough that no DNS cache still answers the tenant's name.
func TestAServiceTheTenantRoutedElsewhereGetsNoCallOfTheOperator(t *testing.T) {
	w := newWorld(t)
	routed := w.routeLikeDNS()
	w.create(wordcount("victim"))
	victim := w.runUntilPhase("victim", v1beta1.PhaseRunning)
	w.create(wordcount("tenant"))
	tenant := w.runUntilPhase("tenant", v1beta1.PhaseRunning)
	w.events()
	job := tenant.Status.JobStatus.JobID
	hash := tenant.Status.JobStatus.ClusterHash
	service := flink.VersionedServiceName(tenant, hash)

	w.pointServiceAt(service, flink.VersionedServiceName(victim, victim.Status.JobStatus.ClusterHash)+".other-team.svc.cluster.local")
	w.update("tenant", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "1" })
	w.runFor("tenant", 20*time.Second)

	assert.Empty(t, routed.list(), "no call goes where the tenant's Service points")
	events := strings.Join(w.events(), "\n")
	assert.Contains(t, events, "JobManagerServiceRefused")
	assert.Contains(t, events, ns+"/"+service)
	assert.Contains(t, events, "spec.type is ExternalName")
	now := w.get("tenant")
	assert.Equal(t, job, now.Status.JobStatus.JobID, "the job is kept")
	assert.Equal(t, v1beta1.PhaseRunning, now.Status.Phase)
	ready := condition(now, v1beta1.ConditionReady)
	require.NotNil(t, ready)
	assert.Equal(t, metav1.ConditionFalse, ready.Status)
	assert.Equal(t, "JobManagerServiceRefused", ready.Reason)
	assert.Contains(t, ready.Message, ns+"/"+service)

	svc, err := w.kube.CoreV1().Services(ns).Get(context.Background(), service, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, corev1.ClusterIPNone, svc.Spec.ClusterIP, "the operator's Service is back")
	assert.Empty(t, svc.Spec.ExternalName)
	assert.Equal(t, map[string]string{"flink-app": "tenant", "flink-app-hash": hash, "flink-deployment-type": "jobmanager"}, svc.Spec.Selector)

	// Once the Service has been the operator's for longer than DNS caches an answer, the job is
	// followed again and the savepoint asked for is taken, on the tenant's own JobManager.
	done := w.runUntil("tenant", "savepoint of nonce 1", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.SavepointTriggerNonce == "1" && savepointTaken(a)
	})
	assert.Equal(t, job, done.Status.JobStatus.JobID)
	assert.Empty(t, routed.list())
	w.runFor("tenant", 10*time.Second)
	ready = condition(w.get("tenant"), v1beta1.ConditionReady)
	require.NotNil(t, ready)
	assert.Equal(t, metav1.ConditionTrue, ready.Status, ready.Message)
}

// savepointTaken tells whether the newest ledger entry of a manual savepoint completed.
func savepointTaken(a *v1beta1.FlinkApplication) bool {
	for i := len(a.Status.Ledger) - 1; i >= 0; i-- {
		if e := a.Status.Ledger[i]; e.Purpose == v1beta1.SavepointManual {
			return e.Path != ""
		}
	}
	return false
}

// A session cluster's Service pointed at another team's JobManager gets no jar, no submission and no
// read of a session job's: the job waits, the session cluster puts its Service back, and the job
// runs on its own cluster once DNS can no longer answer the tenant's name.
func TestASessionClustersServiceRoutedElsewhereGetsNoJarOrJob(t *testing.T) {
	w := newWorld(t)
	jar := w.withSessions()
	routed := w.routeLikeDNS()
	w.createSessionCluster(sessionCluster("victim"))
	w.createSessionCluster(sessionCluster("session"))
	running := func(name string) func() bool {
		return func() bool { return w.sessionCluster(name).Status.Phase == v1beta1.SessionClusterRunning }
	}
	w.runSessionsUntil("victim running", running("victim"))
	w.runSessionsUntil("session running", running("session"))
	victim, session := w.sessionCluster("victim"), w.sessionCluster("session")
	service := flink.VersionedServiceNameOf("session", session.Status.DeployHash)
	w.pointServiceAt(service, flink.VersionedServiceNameOf("victim", victim.Status.DeployHash)+".other-team.svc.cluster.local")
	w.events()

	w.createSessionJob(sessionJob("a", "session", jar, v1beta1.UpgradeModeSavepoint))
	w.runSessionsUntil("job a running", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobRunning) })

	assert.Empty(t, routed.list(), "no call goes where the tenant's Service points")
	assert.Len(t, w.jms[service].Jobs(), 1, "the job runs on its own cluster")
	assert.Empty(t, w.jms[flink.VersionedServiceNameOf("victim", victim.Status.DeployHash)].Jobs(), "and nothing on the other")
	assert.Contains(t, strings.Join(w.events(), "\n"), kindpass.RefusedServiceReason)
}

// A jar transfer runs off the worker, for as long as the jar host takes: it asks again, right
// before its upload, whether the JobManager's Service is still the operator's.
func TestAJarTransferAsksAgainBeforeItUploads(t *testing.T) {
	w := newWorld(t)
	w.withSessions()
	w.createSessionCluster(sessionCluster("session"))
	w.runSessionsUntil("running", func() bool { return w.sessionCluster("session").Status.Phase == v1beta1.SessionClusterRunning })
	c := w.sessionCluster("session")
	owner, hash := flink.OwnerFromSessionCluster(c), c.Status.DeployHash
	check := sessionjob.RouteCheck(&w.env.Environment, owner, hash)
	require.NoError(t, check())

	w.pointServiceAt(flink.VersionedServiceNameOf("session", hash), "jm.other-team.svc.cluster.local")
	err := check()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Service "+ns+"/"+flink.VersionedServiceNameOf("session", hash))
	assert.Contains(t, err.Error(), "spec.type is ExternalName")
}
