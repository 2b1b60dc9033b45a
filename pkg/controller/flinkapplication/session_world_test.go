package flinkapplication

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"sort"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jars"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// The world of session kinds: the same fake clientsets, clock and simulated JobManagers, a
// FlinkSessionCluster's objects rendered like an application's, and a loopback server for jars.

// testJarBytes is the jar the loopback server serves at /wordcount.jar.
var testJarBytes = []byte("PK\x03\x04 a jar, as far as the simulator cares")

func testJarSHA256() string {
	sum := sha256.Sum256(testJarBytes)
	return hex.EncodeToString(sum[:])
}

// withSessions lets the world run session kinds: jar fetches allowed from loopback only.
func (w *world) withSessions() string {
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/wordcount.jar" {
			http.NotFound(rw, r)
			return
		}
		_, _ = rw.Write(testJarBytes)
	}))
	w.t.Cleanup(srv.Close)
	f, err := jars.NewFetcher(jars.Policy{AllowHTTP: true, AllowedNetworks: []string{"127.0.0.1/32"}, Timeout: 5 * time.Second})
	require.NoError(w.t, err)
	w.env.Sessions, w.env.Jars = &clientObserver{w: w}, f
	return srv.URL + "/wordcount.jar"
}

func (o *clientObserver) SessionCluster(namespace, name string) (*v1beta1.FlinkSessionCluster, error) {
	return o.w.apps.FlinkV1beta1().FlinkSessionClusters(namespace).Get(context.Background(), name, metav1.GetOptions{})
}

func (o *clientObserver) SessionJob(namespace, name string) (*v1beta1.FlinkSessionJob, error) {
	return o.w.apps.FlinkV1beta1().FlinkSessionJobs(namespace).Get(context.Background(), name, metav1.GetOptions{})
}

func (o *clientObserver) SessionJobsOf(namespace, cluster string) ([]*v1beta1.FlinkSessionJob, error) {
	list, err := o.w.apps.FlinkV1beta1().FlinkSessionJobs(namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []*v1beta1.FlinkSessionJob
	for i := range list.Items {
		if list.Items[i].Spec.ClusterName == cluster {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// sessionCluster is a session cluster of two TaskManagers with two slots each, checkpointing every
// ten seconds and keeping its checkpoints on cancel.
func sessionCluster(name string) *v1beta1.FlinkSessionCluster {
	slots, tms := int32(2), int32(2)
	small := &corev1.ResourceRequirements{}
	return &v1beta1.FlinkSessionCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Generation: 1},
		Spec: v1beta1.FlinkSessionClusterSpec{
			ClusterSpec: v1beta1.ClusterSpec{
				Image: "flink:1.20", FlinkVersion: "1.20",
				FlinkConfig: v1beta1.FlinkConfig{
					"state.savepoints.dir":             "file:///checkpoints/savepoints",
					"state.checkpoints.dir":            "file:///checkpoints/checkpoints",
					"execution.checkpointing.interval": "10s",
					// A job lost with a JobManager without HA restarts from the newest checkpoint status
					// recorded, which must not have been subsumed since.
					"state.checkpoints.num-retained": "3",
				},
				JobManagerConfig: v1beta1.JobManagerConfig{Resources: small},
			},
			TaskManagerConfig: v1beta1.SessionTaskManagerConfig{
				TaskManagerConfig: v1beta1.TaskManagerConfig{TaskSlots: &slots, Resources: small}, Replicas: &tms},
		},
	}
}

// sessionJob is a job of parallelism 1 on the named cluster, from the world's jar server.
func sessionJob(name, cluster, jarURI string, mode v1beta1.UpgradeMode) *v1beta1.FlinkSessionJob {
	one := int32(1)
	return &v1beta1.FlinkSessionJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Generation: 1},
		Spec: v1beta1.FlinkSessionJobSpec{
			ClusterName: cluster, DeleteMode: v1beta1.DeleteModeSavepoint,
			Job: v1beta1.JobSpec{JarURI: jarURI, EntryClass: "org.apache.flink.WordCount", Args: []string{"--input", "a b"},
				Parallelism: &one, UpgradeMode: mode},
		},
	}
}

func (w *world) createSessionCluster(c *v1beta1.FlinkSessionCluster) {
	_, err := w.apps.FlinkV1beta1().FlinkSessionClusters(ns).Create(context.Background(), c, metav1.CreateOptions{})
	require.NoError(w.t, err)
}

func (w *world) createSessionJob(j *v1beta1.FlinkSessionJob) {
	_, err := w.apps.FlinkV1beta1().FlinkSessionJobs(ns).Create(context.Background(), j, metav1.CreateOptions{})
	require.NoError(w.t, err)
}

func (w *world) sessionJob(name string) *v1beta1.FlinkSessionJob {
	j, err := w.apps.FlinkV1beta1().FlinkSessionJobs(ns).Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(w.t, err)
	return j
}

func (w *world) sessionCluster(name string) *v1beta1.FlinkSessionCluster {
	c, err := w.apps.FlinkV1beta1().FlinkSessionClusters(ns).Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(w.t, err)
	return c
}

// updateSessionJob changes a session job's spec as `kubectl apply` would.
func (w *world) updateSessionJob(name string, change func(*v1beta1.FlinkSessionJob)) {
	j := w.sessionJob(name)
	change(j)
	j.Generation++
	_, err := w.apps.FlinkV1beta1().FlinkSessionJobs(ns).Update(context.Background(), j, metav1.UpdateOptions{})
	require.NoError(w.t, err)
}

func (w *world) updateSessionCluster(name string, change func(*v1beta1.FlinkSessionCluster)) {
	c := w.sessionCluster(name)
	change(c)
	c.Generation++
	_, err := w.apps.FlinkV1beta1().FlinkSessionClusters(ns).Update(context.Background(), c, metav1.UpdateOptions{})
	require.NoError(w.t, err)
}

// reconcileSessions runs one pass of every session cluster and session job, then lets the clock run.
func (w *world) reconcileSessions() {
	w.settle()
	ctx := context.Background()
	after := maxStep
	clusters, err := w.apps.FlinkV1beta1().FlinkSessionClusters(ns).List(ctx, metav1.ListOptions{})
	require.NoError(w.t, err)
	for _, c := range clusters.Items {
		if a, err := w.reconcileSessionCluster(ctx, ns, c.Name); err == nil && a > 0 && a < after {
			after = a
		}
	}
	jobs, err := w.apps.FlinkV1beta1().FlinkSessionJobs(ns).List(ctx, metav1.ListOptions{})
	require.NoError(w.t, err)
	for _, j := range jobs.Items {
		if a, err := w.reconcileSessionJob(ctx, ns, j.Name); err == nil && a > 0 && a < after {
			after = a
		}
	}
	w.removeFinalized()
	w.clock.Step(after)
}

// deleteSessionJob and deleteSessionCluster mark the object deleted, as the API server does for an
// object with finalizers; removeFinalized removes those whose finalizers are gone.
func (w *world) deleteSessionJob(name string) {
	j := w.sessionJob(name)
	now := metav1.NewTime(w.clock.Now())
	j.DeletionTimestamp = &now
	_, err := w.apps.FlinkV1beta1().FlinkSessionJobs(ns).Update(context.Background(), j, metav1.UpdateOptions{})
	require.NoError(w.t, err)
}

func (w *world) deleteSessionCluster(name string) {
	c := w.sessionCluster(name)
	now := metav1.NewTime(w.clock.Now())
	c.DeletionTimestamp = &now
	_, err := w.apps.FlinkV1beta1().FlinkSessionClusters(ns).Update(context.Background(), c, metav1.UpdateOptions{})
	require.NoError(w.t, err)
}

func (w *world) removeFinalized() {
	ctx := context.Background()
	jobs, _ := w.apps.FlinkV1beta1().FlinkSessionJobs(ns).List(ctx, metav1.ListOptions{})
	for _, j := range jobs.Items {
		if j.DeletionTimestamp != nil && len(j.Finalizers) == 0 {
			_ = w.apps.FlinkV1beta1().FlinkSessionJobs(ns).Delete(ctx, j.Name, metav1.DeleteOptions{})
		}
	}
	clusters, _ := w.apps.FlinkV1beta1().FlinkSessionClusters(ns).List(ctx, metav1.ListOptions{})
	for _, c := range clusters.Items {
		if c.DeletionTimestamp != nil && len(c.Finalizers) == 0 {
			_ = w.apps.FlinkV1beta1().FlinkSessionClusters(ns).Delete(ctx, c.Name, metav1.DeleteOptions{})
		}
	}
}

// runSessionsUntil reconciles every session object until cond holds, failing after a simulated hour.
func (w *world) runSessionsUntil(what string, cond func() bool) {
	w.t.Helper()
	deadline := w.clock.Now().Add(time.Hour)
	for w.clock.Now().Before(deadline) {
		w.reconcileSessions()
		if cond() {
			return
		}
	}
	w.t.Fatalf("%s: not reached within a simulated hour; %s", what, w.describeSessions())
}

// sessionJobIn tells whether the session job is in the phase; a job that is gone is in none.
func (w *world) sessionJobIn(name string, phase v1beta1.FlinkSessionJobPhase) bool {
	j, err := w.apps.FlinkV1beta1().FlinkSessionJobs(ns).Get(context.Background(), name, metav1.GetOptions{})
	return err == nil && j.Status.Phase == phase
}

func (w *world) sessionGone(name string) bool {
	_, err := w.apps.FlinkV1beta1().FlinkSessionJobs(ns).Get(context.Background(), name, metav1.GetOptions{})
	return apierrors.IsNotFound(err)
}

func (w *world) describeSessions() string {
	ctx := context.Background()
	out := ""
	if cs, err := w.apps.FlinkV1beta1().FlinkSessionClusters(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, c := range cs.Items {
			out += "\ncluster " + c.Name + ": " + string(c.Status.Phase) + " " + c.Status.Reason + " deployHash " + c.Status.DeployHash
		}
	}
	if js, err := w.apps.FlinkV1beta1().FlinkSessionJobs(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, j := range js.Items {
			out += "\njob " + j.Name + ": " + string(j.Status.Phase) + " " + j.Status.Reason
			for _, h := range j.Status.History {
				out += " [" + string(h.From) + ">" + string(h.To) + " " + h.Reason + "]"
			}
		}
	}
	return out
}

// jobsOf are the simulator's records of a session job's jobs: those on its cluster whose ids carry
// its name (of any object of that name).
func (w *world) jobsOf(cluster, job string) []flinksim.JobRecord {
	owner := jobstate.OwnerOf(sessionJobKindName, &metav1.ObjectMeta{Namespace: ns, Name: job})
	var out []flinksim.JobRecord
	for _, r := range w.timeline.Jobs(ns + "/" + cluster) {
		if owner.Named(r.JobID) {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].AliveFrom().Before(out[j].AliveFrom()) })
	return out
}
