package flinkapplication

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/guardian"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessionjob"
	"github.com/flinkfsm/flinkfsm/pkg/controller/snapshots"
)

const shardKey = "flinkfsm.io/shard"

// An application relabelled from shard a to shard b: a's operator finds it gone and forgets it,
// changing and deleting nothing; b's takes it over on its first pass, and its job runs on untouched.
func TestARelabelledApplicationMovesToTheOtherShardWithoutARestart(t *testing.T) {
	w := newWorld(t)
	w.shardAs(shardKey + "=a")
	app := wordcount("moving")
	app.Labels = map[string]string{shardKey: "a"}
	w.create(app)
	running := w.runUntilPhase("moving", v1beta1.PhaseRunning)
	jobID, hash := running.Status.JobStatus.JobID, running.Status.DeployHash
	require.NotEmpty(t, jobID)

	w.relabel(applicationKindName, "moving", shardKey, "b")
	w.clearActions()
	after, err := w.reconcile("moving")
	require.NoError(t, err)
	assert.Equal(t, untilChanged, after, "shard a looks at it again only if it comes back")
	assert.Empty(t, w.writes(), "shard a changes and deletes nothing of an application that left it")

	w.shardAs(shardKey + "=b")
	for i := 0; i < 20; i++ {
		_, err := w.reconcile("moving")
		require.NoError(t, err)
	}
	moved := w.get("moving")
	assert.Equal(t, v1beta1.PhaseRunning, moved.Status.Phase)
	assert.Equal(t, jobID, moved.Status.JobStatus.JobID, "the same job runs on")
	assert.Equal(t, hash, moved.Status.DeployHash)
	assert.Len(t, w.timeline.Jobs(ns+"/moving"), 1, "no job was started again")
	assert.True(t, hasFinalizer(&moved.ObjectMeta), "the finalizer stays for its new operator")
}

// A session job whose cluster is in another shard is held, saying why, and nothing is done for it;
// once the cluster is relabelled into its shard it runs as any other.
func TestASessionJobWhoseClusterIsInAnotherShardIsHeld(t *testing.T) {
	w := newWorld(t)
	jar := w.withSessions()
	cluster := sessionCluster("session")
	cluster.Labels = map[string]string{shardKey: "b"}
	w.createSessionCluster(cluster)
	job := sessionJob("job", "session", jar, v1beta1.UpgradeModeSavepoint)
	job.Labels = map[string]string{shardKey: "a"}
	w.createSessionJob(job)
	w.shardAs(shardKey + "=a")

	w.clearActions()
	w.reconcileSessions()
	w.reconcileSessions()
	held := w.sessionJob("job")
	ready := meta.FindStatusCondition(held.Status.Conditions, v1beta1.ConditionReady)
	require.NotNil(t, ready)
	assert.Equal(t, sessionjob.ReasonOtherShard, ready.Reason)
	assert.Contains(t, ready.Message, "FlinkSessionCluster session is in another shard")
	assert.Contains(t, ready.Message, `shardSelector "flinkfsm.io/shard=a"`)
	assert.Contains(t, ready.Message, "flinkfsm.io/shard=b")
	assert.Empty(t, held.Status.Phase, "the job's machine does not move")
	assert.Empty(t, held.Finalizers)
	assert.Equal(t, []string{"patch flinksessionjobs/status job"}, w.writes(), "one status write, and not to the cluster")
	assert.Equal(t, 1, countOf(eventReasons(w.events()), sessionjob.ReasonOtherShard), "one Event, not one per pass")

	w.relabel(sessionClusterKindName, "session", shardKey, "a")
	w.runSessionsUntil("the job runs once its cluster is in its shard", func() bool { return w.sessionJobIn("job", v1beta1.SessionJobRunning) })
}

// A session job that runs, and whose cluster then moves to another shard, is left running as it is:
// neither taken for lost nor stopped; the cluster's new operator keeps the cluster's deletion and its
// Flink clusters for it.
func TestASessionJobLeftBehindByItsClusterKeepsRunning(t *testing.T) {
	w, _ := runningJobs(t)
	for _, name := range []string{"a", "b"} {
		w.relabel(sessionJobKindName, name, shardKey, "a")
	}
	w.relabel(sessionClusterKindName, "session", shardKey, "a")
	w.shardAs(shardKey + "=a")
	w.reconcileSessions()
	before := w.sessionJob("a")

	w.relabel(sessionClusterKindName, "session", shardKey, "b")
	for i := 0; i < 5; i++ {
		w.reconcileSessions()
	}
	a := w.sessionJob("a")
	assert.Equal(t, v1beta1.SessionJobRunning, a.Status.Phase)
	assert.Equal(t, before.Status.JobStatus.JobID, a.Status.JobStatus.JobID)
	assert.Len(t, w.jobsOf("session", "a"), 1, "the job was not started again")
	assert.Equal(t, sessionjob.ReasonOtherShard, meta.FindStatusCondition(a.Status.Conditions, v1beta1.ConditionReady).Reason)

	// Shard b's operator, asked to delete the cluster, waits for the jobs of shard a that name it.
	w.shardAs(shardKey + "=b")
	w.deleteSessionCluster("session")
	for i := 0; i < 3; i++ {
		w.reconcileSessions()
	}
	c := w.sessionCluster("session")
	assert.True(t, hasFinalizer(&c.ObjectMeta), "the cluster's deletion waits")
	assert.Contains(t, c.Status.Reason, "deletion waits for FlinkSessionJobs of another shard that name this cluster: a, b")
}

// Retention never retires a FlinkSnapshot that an application of another shard restores from,
// though this operator's caches do not hold that application.
func TestRetentionReadsWhatOtherShardsRestoreFrom(t *testing.T) {
	w := newWorld(t)
	w.withSessions()
	w.shardAs(shardKey + "=a")
	other := wordcount("other")
	other.Labels = map[string]string{shardKey: "b"}
	other.Spec.RestoreSnapshot = "named"
	other.Status.JobStatus.RestorePath = "file:///checkpoints/savepoints/sp-1"
	w.create(other)
	mine := wordcount("mine")
	mine.Labels = map[string]string{shardKey: "a"}
	w.create(mine)
	rc := newContext(context.Background(), &fsm.Pass{Config: w.env.Config, Meta: &metav1.ObjectMeta{Namespace: ns, Name: "mine"}}, w.env)
	rc.Settings, rc.Job = applicationSettings(mine), &mine.Status.JobOwnerStatus
	g, err := kindpass.StateGuardian(rc.Pass, false)
	require.NoError(t, err)
	assert.False(t, g.MayDelete(guardian.State{Path: "file:///checkpoints/savepoints/sp-1"}).MayGo())
	assert.False(t, g.MayDelete(guardian.State{Snapshot: "named"}).MayGo())

	// A burst of retirements reads the other shards once.
	lists := func() int {
		n := 0
		for _, a := range w.apps.Actions() {
			if a.GetVerb() == "list" && a.GetResource().Resource == "flinkapplications" {
				n++
			}
		}
		return n
	}
	before := lists()
	_, err = kindpass.StateGuardian(rc.Pass, false)
	require.NoError(t, err)
	assert.Equal(t, before+1, lists(), "only this shard's own (the world's observer lists); the other shards' read is kept")
	w.clock.Step(snapshots.OtherShardsFreshFor)
	_, err = kindpass.StateGuardian(rc.Pass, false)
	require.NoError(t, err)
	assert.Equal(t, before+3, lists(), "read again once stale")
}

// A deleted FlinkSnapshot waiting for its storage to be disposed of is explained as orphaned only
// when its owner does not exist at all, and then by the shard its labels are in.
func TestAnOrphanedSnapshotIsExplainedByItsOwnShardOnly(t *testing.T) {
	w := newWorld(t)
	w.shardAs(shardKey + "=a")
	elsewhere := wordcount("elsewhere")
	elsewhere.Labels = map[string]string{shardKey: "b"}
	w.create(elsewhere)
	now := metav1.NewTime(w.clock.Now())
	snapshot := func(name, owner, shard string) {
		s := &v1beta1.FlinkSnapshot{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{shardKey: shard},
			Finalizers: []string{snapshots.DisposeFinalizer}, DeletionTimestamp: &now},
			Spec: v1beta1.FlinkSnapshotSpec{Owner: v1beta1.SnapshotOwner{Kind: applicationKindName, Name: owner}}}
		_, err := w.apps.FlinkV1beta1().FlinkSnapshots(ns).Create(context.Background(), s, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	snapshot("of-b", "elsewhere", "a")
	snapshot("orphan", "gone", "a")
	for _, name := range []string{"of-b", "orphan"} {
		_, err := w.env.ReconcileOrphanedSnapshot(context.Background(), ns, name)
		require.NoError(t, err)
	}
	ofB, err := w.apps.FlinkV1beta1().FlinkSnapshots(ns).Get(context.Background(), "of-b", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, ofB.Status.Error, "its owner is another shard's, whose operator answers it")
	orphan, err := w.apps.FlinkV1beta1().FlinkSnapshots(ns).Get(context.Background(), "orphan", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Contains(t, orphan.Status.Error, "FlinkApplication gone does not exist")
}

func TestSnapshotsCarryTheirOwnersShardLabels(t *testing.T) {
	sel, err := labels.Parse("flinkfsm.io/shard=a,team in (x),!legacy")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{shardKey: "a", "team": "x"},
		kindpass.ShardLabels(sel, map[string]string{shardKey: "a", "team": "x", "app": "wordcount"}))
	assert.Nil(t, kindpass.ShardLabels(nil, map[string]string{shardKey: "a"}))
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if strings.EqualFold(x, s) {
			n++
		}
	}
	return n
}
