package flinkapplication

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
	"github.com/flinkfsm/flinkfsm/pkg/controller/snapshots"
)

// Attack review s8 (of 36232c2, ce10a11, 401ecfc). Each test below failed on 401ecfc. A session
// cluster records the spec each Flink cluster it keeps was rendered from (status.clusters): it
// creates the JobManager of a kept HA cluster again, so that its jobs come back and move, and a
// session job reads from it whether its job's cluster runs with HA, whatever HA type
// (sessioncluster/cluster_specs.go); a session job waiting for a JobManager nothing creates says so with a
// Warning (waitForHAJobManager); every object's newest savepoint is named to the other objects'
// guardians (refsOf).

// haSessionJobRunning is an HA session cluster "session" and a session job "a" whose job runs
// stable on it (Running), with checkpoints completed.
func haSessionJobRunning(t *testing.T) (*world, string, string) {
	return sessionJobRunningWith(t, "kubernetes")
}

func sessionJobRunningWith(t *testing.T, haType string) (*world, string, string) {
	w := newWorld(t)
	jar := w.withSessions()
	c := sessionCluster("session")
	c.Spec.FlinkConfig["high-availability.type"] = haType
	c.Spec.FlinkConfig["high-availability.storageDir"] = "file:///checkpoints/ha"
	if haType == "zookeeper" {
		c.Spec.FlinkConfig["high-availability.zookeeper.quorum"] = "zk-0.zk:2181"
	}
	w.createSessionCluster(c)
	w.createSessionJob(sessionJob("a", "session", jar, v1beta1.UpgradeModeLastState))
	w.runSessionsUntil("a runs stable", func() bool { w.events(); return w.sessionJobIn("a", v1beta1.SessionJobRunning) })
	for end := w.clock.Now().Add(time.Minute); w.clock.Now().Before(end); {
		w.reconcileSessions()
		w.events()
	}
	require.True(t, w.sessionJobIn("a", v1beta1.SessionJobRunning))
	j := w.sessionJob("a")
	return w, jobstate.Stable(&j.Status.JobOwnerStatus).JobID, w.sessionCluster("session").Status.DeployHash
}

// S8 (36232c2, liveness): a session job in Running whose job's Flink cluster was superseded by the
// FlinkSessionCluster (an ordinary spec edit, HA kept) while that cluster's JobManager Deployment
// went away. haKeepsJobs now says "HA keeps the job" for as long as the old cluster's HA ConfigMaps
// are left, and nothing ever removes them: the session cluster's removeLeftHAConfigMaps only
// touches hashes its status still names (ownClusterHashes), and nothing ever creates a JobManager
// of the superseded hash again. The session job therefore stays in phase Running with no job
// running, for ever, with only a waitingOn reason and no Warning Event; the session cluster keeps
// the superseded cluster's TaskManagers "while jobs run on it". The tenant's stream is silently
// down until a human deletes ConfigMaps by hand.
func TestS8ASessionJobWhoseSupersededHAClustersJobManagerIsGoneRunsAgainOrSaysWhy(t *testing.T) {
	w, first, hash := haSessionJobRunning(t)
	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerNameOf("session", hash), metav1.DeleteOptions{}))
	w.updateSessionCluster("session", func(c *v1beta1.FlinkSessionCluster) { c.Spec.FlinkConfig["execution.checkpointing.interval"] = "11s" })
	var warnings []string
	w.runSessionsUntil("the session cluster runs its new Flink cluster", func() bool {
		for _, e := range w.events() {
			if strings.HasPrefix(e, "Warning") {
				warnings = append(warnings, e)
			}
		}
		d := w.sessionCluster("session").Status.DeployHash
		return d != "" && d != hash
	})
	newHash := w.sessionCluster("session").Status.DeployHash
	progressed := false
	for end := w.clock.Now().Add(2 * time.Hour); w.clock.Now().Before(end) && !progressed; {
		w.reconcileSessions()
		for _, e := range w.events() {
			if strings.HasPrefix(e, "Warning") {
				warnings = append(warnings, e)
			}
		}
		for _, r := range w.jobsOf("session", "a") {
			if strings.Contains(r.JobManager, newHash) {
				progressed = true
			}
		}
	}
	j := w.sessionJob("a")
	t.Logf("first job %s on %s; a: %s; HA ConfigMaps %v; warnings %v", first, hash, w.describeSessions(), w.haConfigMaps(), warnings)
	w.assertOneJobEach("a")
	said := false
	for _, e := range warnings {
		if strings.Contains(e, hash) || strings.Contains(e, first) {
			said = true
		}
	}
	assert.True(t, progressed || said, "session job a (phase %s, %q) has no live job for two hours and nothing warns: "+
		"it waits for a JobManager of superseded cluster %s that nothing creates again", j.Status.Phase, j.Status.Reason, hash)
}

// S8 (ce10a11/401ecfc, guardian): the newest savepoint of a job running under
// NO_EXTERNALIZED_CHECKPOINTS is protected only in its owner's own pass (pathsNamedBy via
// ownReferences). What every other object of the namespace is told of it (refsOf, used by
// stateGuardian for other applications, session jobs and other shards) still names only each
// recorded job's newest *state* (a checkpoint that Flink discards as the job ends). Another
// application of the namespace registers a FlinkSnapshot of wc's newest savepoint with
// disposeOnDelete and deletes it: its own pass asks the guardian, which knows nothing that needs
// the savepoint, and disposes of it through its own JobManager. wc's job then fails; its
// checkpoints go with it (NO_EXTERNALIZED_CHECKPOINTS) and its restore has only older state:
// the state since the older savepoint is lost, by the act of another object's owner.
func TestS8AnotherObjectsDeletedFlinkSnapshotNeverDisposesOfTheNewestSavepointAJobWithoutExternalizedCheckpointsNeeds(t *testing.T) {
	w := newWorld(t)
	// Checkpoint records go to status, as with checkpointBookInterval 0.
	w.env.Book = nil
	noExt := func(s *v1beta1.FlinkApplicationSpec) {
		s.FlinkConfig["execution.checkpointing.externalized-checkpoint-retention"] = "NO_EXTERNALIZED_CHECKPOINTS"
	}
	runningWith(t, w, "wc", noExt)
	runningWith(t, w, "other", nil)
	newest, shown := takeSavepoint(t, w, "wc", "s1")
	// Checkpoints of wc's job recorded since: its newest state is a checkpoint, not the savepoint.
	for end := w.clock.Now().Add(5 * time.Minute); w.clock.Now().Before(end); {
		_, _ = w.reconcile("wc")
		w.events()
	}
	app := w.get("wc")
	for _, e := range app.Status.Ledger {
		t.Logf("ledger %s %s %s %s", e.Purpose, e.Result, e.JobID, e.Path)
	}
	require.NotEqual(t, newest, ledger.Of(&app.Status.Ledger).NewestPath(jobstate.Stable(&app.Status.JobOwnerStatus).JobID))

	// wc's user tidies up the FlinkSnapshot object (without disposeOnDelete: the storage stays).
	w.deleteSnapshot(shown)
	for i := 0; i < 3; i++ {
		_, _ = w.reconcile("wc")
	}
	for _, s := range w.snapshots() {
		t.Logf("snapshot %s %s deleted %v", s.Name, s.Status.Path, s.DeletionTimestamp)
	}
	w.createSnapshot("grab", func(s *v1beta1.FlinkSnapshotSpec) {
		s.Owner.Name, s.Path, s.DisposeOnDelete = "other", newest, true
	})
	for i := 0; i < 5; i++ {
		_, _ = w.reconcile("other")
	}
	require.Contains(t, w.snapshot("grab").Finalizers, snapshots.DisposeFinalizer)
	w.deleteSnapshot("grab")
	for i := 0; i < 5; i++ {
		_, _ = w.reconcile("other")
		_, _ = w.reconcile("wc")
	}
	t.Logf("events %v", w.events())
	assert.Equal(t, v1beta1.PhaseRunning, w.get("wc").Status.Phase)
	assert.True(t, w.storage.Exists(newest), "wc's newest savepoint, the newest state its job leaves when it ends, was disposed of by another object's FlinkSnapshot")
}

// S8 (36232c2, safety): haKeepsJobs judges "Flink's HA data of the cluster is left" by Kubernetes
// HA ConfigMaps alone, while ConfigHasHighAvailability (and so the first branch) takes any
// high-availability.type for HA. A tenant's session cluster with ZooKeeper HA keeps its job graphs
// and checkpoint pointers in ZooKeeper under the per-cluster high-availability.cluster-id the
// operator renders: no ConfigMap is ever left. Explorer seed 11000067's sequence (the old
// cluster's JobManager goes, the spec turns HA off, then back on) then still ends with two live
// jobs of one FlinkSessionJob: the session job takes its job for gone once the session cluster
// moved on, submits a second on the cluster in between, and the re-created old cluster recovers
// the first from ZooKeeper beside it. The world hides Flink's ConfigMaps from the operator's
// listing to stand for HA data kept outside Kubernetes; the simulated JobManager recovers as HA does.
func TestS8ASessionJobWaitsForItsJobWhileZooKeeperHADataOfItsClusterIsLeft(t *testing.T) {
	w, first, hash := sessionJobRunningWith(t, "zookeeper")
	w.kube.PrependReactor("list", "configmaps", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if l, ok := action.(k8stesting.ListAction); ok && strings.Contains(l.GetListRestrictions().Labels.String(), flink.FlinkObject) {
			return true, &corev1.ConfigMapList{}, nil
		}
		return false, nil, nil
	})
	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerNameOf("session", hash), metav1.DeleteOptions{}))
	haOff := func(c *v1beta1.FlinkSessionCluster) {
		delete(c.Spec.FlinkConfig, "high-availability.type")
		delete(c.Spec.FlinkConfig, "high-availability.storageDir")
		delete(c.Spec.FlinkConfig, "high-availability.zookeeper.quorum")
	}
	w.updateSessionCluster("session", haOff)
	w.runSessionsUntil("the session cluster runs its new Flink cluster", func() bool {
		w.events()
		d := w.sessionCluster("session").Status.DeployHash
		return d != "" && d != hash
	})
	for i := 0; i < 200; i++ {
		w.reconcileSessions()
		w.events()
	}
	w.updateSessionCluster("session", func(c *v1beta1.FlinkSessionCluster) {
		c.Spec.FlinkConfig["high-availability.type"] = "zookeeper"
		c.Spec.FlinkConfig["high-availability.storageDir"] = "file:///checkpoints/ha"
		c.Spec.FlinkConfig["high-availability.zookeeper.quorum"] = "zk-0.zk:2181"
	})
	require.Equal(t, hash, flink.SessionClusterHash(w.sessionCluster("session")), "the spec is back to the first cluster's")
	for i := 0; i < 300; i++ {
		w.reconcileSessions()
		w.events()
	}
	for _, r := range w.jobsOf("session", "a") {
		t.Logf("job %s on %s from %q alive from %s", r.JobID, r.JobManager, r.RestoredFrom, r.AliveFrom())
	}
	t.Logf("first job %s; %s", first, w.describeSessions())
	w.assertOneJobEach("a")
}
