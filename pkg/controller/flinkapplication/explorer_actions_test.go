package flinkapplication

import (
	"context"
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/snapshots"
)

// The users' actions the explorer draws from: what kubectl apply, kubectl delete and kubectl create
// do to the objects of a run. Each returns what it did, or "" when it does not apply now (the
// explorer then draws another).

// userAction is one kind of thing a user does.
type userAction struct {
	name   string
	weight int
	do     func(x *explorer) string
}

var userActions = []userAction{
	{"image", 6, (*explorer).changeImage},
	{"parallelism", 5, (*explorer).changeParallelism},
	{"flinkConfig", 3, (*explorer).changeFlinkConfig},
	{"restartNonce", 4, (*explorer).restartNonce},
	{"savepointTriggerNonce", 6, (*explorer).savepointNonce},
	{"savepointRedeployNonce", 4, (*explorer).redeploy},
	{"suspend or resume", 5, (*explorer).suspendOrResume},
	{"delete", 3, (*explorer).deleteObject},
	{"create again", 6, (*explorer).createAgain},
	{"retention", 3, (*explorer).changeRetention},
	{"FlinkSnapshot create", 5, (*explorer).createFlinkSnapshot},
	{"FlinkSnapshot delete", 4, (*explorer).deleteFlinkSnapshot},
	{"BlueGreen teardown", 2, (*explorer).tearDownVersion},
	{"session cluster change", 1, (*explorer).changeSessionCluster},
}

// userAct does one user action, drawn by weight among those that apply now.
func (x *explorer) userAct() {
	x.steps++
	x.actions++
	actions := x.userActions()
	total := 0
	for _, a := range actions {
		total += a.weight
	}
	for try := 0; try < 20; try++ {
		n := x.rng.IntN(total)
		for _, a := range actions {
			if n -= a.weight; n < 0 {
				if did := a.do(x); did != "" {
					x.note("user: %s", did)
					return
				}
				break
			}
		}
	}
	x.note("user: nothing applied")
}

// jobOwner draws a live application or session job that is not being deleted.
func (x *explorer) jobOwner() *identity {
	var owners []*identity
	for _, id := range x.live() {
		if id.kind != sessionClusterKindName && !id.deleting {
			owners = append(owners, id)
		}
	}
	id, _ := pickOne(x, owners)
	return id
}

// edit changes a job owner's spec as kubectl apply would: change gets the application's spec or
// the session job's job spec (and the session job itself, for its deleteMode).
func (x *explorer) edit(id *identity, app func(*v1beta1.FlinkApplicationSpec), job func(*v1beta1.FlinkSessionJob)) {
	switch id.kind {
	case applicationKindName:
		x.w.update(id.name, func(a *v1beta1.FlinkApplication) { app(&a.Spec) })
	case sessionJobKindName:
		x.w.updateSessionJob(id.name, job)
	}
}

func (x *explorer) changeImage() string {
	id := x.jobOwner()
	if id == nil {
		return ""
	}
	if id.kind == sessionJobKindName {
		args := []string{"--input", x.nonce()}
		x.edit(id, nil, func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = args })
		return fmt.Sprintf("%s args %v", id.name, args)
	}
	// Image 3's jobs fail 20 s after they run (newExplorer): its updates roll back.
	image := fmt.Sprintf("flink-wordcount:%d", 1+x.rng.IntN(3))
	x.edit(id, func(s *v1beta1.FlinkApplicationSpec) { s.Image = image }, nil)
	return fmt.Sprintf("%s image %s", id.name, image)
}

func (x *explorer) changeParallelism() string {
	id := x.jobOwner()
	if id == nil {
		return ""
	}
	p := int32(1 + x.rng.IntN(5))
	if id.kind == sessionJobKindName {
		// Two session jobs share the session cluster's four slots.
		p = int32(1 + x.rng.IntN(2))
	}
	x.edit(id, func(s *v1beta1.FlinkApplicationSpec) { s.Parallelism = p },
		func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Parallelism = &p })
	return fmt.Sprintf("%s parallelism %d", id.name, p)
}

func (x *explorer) changeFlinkConfig() string {
	id := x.jobOwner()
	if id == nil || id.kind != applicationKindName {
		return ""
	}
	if x.variesRetention() && x.rng.IntN(2) == 0 {
		return x.changeCheckpointRetention(id)
	}
	interval := fmt.Sprintf("%ds", 5+5*x.rng.IntN(3))
	x.edit(id, func(s *v1beta1.FlinkApplicationSpec) { s.FlinkConfig["execution.checkpointing.interval"] = interval }, nil)
	return fmt.Sprintf("%s flinkConfig execution.checkpointing.interval %s", id.name, interval)
}

func (x *explorer) restartNonce() string {
	id := x.jobOwner()
	if id == nil {
		return ""
	}
	n := x.nonce()
	x.edit(id, func(s *v1beta1.FlinkApplicationSpec) { s.RestartNonce = v1beta1.Nonce(n) },
		func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.RestartNonce = v1beta1.Nonce(n) })
	return fmt.Sprintf("%s restartNonce %s", id.name, n)
}

func (x *explorer) savepointNonce() string {
	id := x.jobOwner()
	if id == nil {
		return ""
	}
	n := x.nonce()
	x.edit(id, func(s *v1beta1.FlinkApplicationSpec) { s.SavepointTriggerNonce = v1beta1.Nonce(n) },
		func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.SavepointTriggerNonce = v1beta1.Nonce(n) })
	return fmt.Sprintf("%s savepointTriggerNonce %s", id.name, n)
}

// redeploy asks for a savepointRedeployNonce from an existing savepoint (any object's) or from a
// completed FlinkSnapshot (any owner's), which the user thereby names for the object's restore.
func (x *explorer) redeploy() string {
	id := x.jobOwner()
	if id == nil {
		return ""
	}
	n := x.nonce()
	if x.rng.IntN(2) == 0 {
		var done []v1beta1.FlinkSnapshot
		for _, s := range x.snapshotsInOrder() {
			if s.Status.State == v1beta1.StateCompleted && s.DeletionTimestamp == nil && s.Spec.Type != v1beta1.SnapshotCheckpoint {
				done = append(done, s)
			}
		}
		if s, ok := pickOne(x, done); ok {
			id.explicitSnapshots[s.Name] = true
			x.edit(id, func(sp *v1beta1.FlinkApplicationSpec) {
				sp.SavepointPath, sp.RestoreSnapshot, sp.SavepointRedeployNonce = "", s.Name, v1beta1.Nonce(n)
			}, func(j *v1beta1.FlinkSessionJob) {
				j.Spec.Job.InitialSavepointPath, j.Spec.Job.RestoreSnapshot, j.Spec.Job.SavepointRedeployNonce = "", s.Name, v1beta1.Nonce(n)
			})
			return fmt.Sprintf("%s savepointRedeployNonce %s from FlinkSnapshot %s (%s, of %s)", id.name, n, s.Name, s.Status.Path, s.Spec.Owner.Name)
		}
	}
	sp, ok := pickOne(x, x.savepoints())
	if !ok {
		return ""
	}
	id.explicit[normalPath(sp.Path)] = true
	x.edit(id, func(s *v1beta1.FlinkApplicationSpec) {
		s.SavepointPath, s.RestoreSnapshot, s.SavepointRedeployNonce = sp.Path, "", v1beta1.Nonce(n)
	}, func(j *v1beta1.FlinkSessionJob) {
		j.Spec.Job.InitialSavepointPath, j.Spec.Job.RestoreSnapshot, j.Spec.Job.SavepointRedeployNonce = sp.Path, "", v1beta1.Nonce(n)
	})
	of := "?"
	if o := x.identityOfJob(sp.JobID); o != nil {
		of = o.name
	}
	return fmt.Sprintf("%s savepointRedeployNonce %s from %s (of %s)", id.name, n, sp.Path, of)
}

func (x *explorer) suspendOrResume() string {
	id := x.jobOwner()
	if id == nil {
		return ""
	}
	state := v1beta1.JobStateSuspended
	if x.desiredState(id) == v1beta1.JobStateSuspended {
		state = v1beta1.JobStateRunning
	}
	x.edit(id, func(s *v1beta1.FlinkApplicationSpec) { s.State = state },
		func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.State = state })
	return fmt.Sprintf("%s state %s", id.name, state)
}

func (x *explorer) desiredState(id *identity) v1beta1.JobDesiredState {
	if id.kind == applicationKindName {
		return x.w.get(id.name).Spec.State
	}
	return x.w.sessionJob(id.name).Spec.Job.State
}

// deleteObject deletes an application or session job with a deleteMode drawn among the three.
func (x *explorer) deleteObject() string {
	id := x.jobOwner()
	if id == nil {
		return ""
	}
	modes := []v1beta1.DeleteMode{v1beta1.DeleteModeSavepoint, v1beta1.DeleteModeSavepoint, v1beta1.DeleteModeNone, v1beta1.DeleteModeForceCancel}
	mode, _ := pickOne(x, modes)
	x.edit(id, func(s *v1beta1.FlinkApplicationSpec) { s.DeleteMode = mode },
		func(j *v1beta1.FlinkSessionJob) { j.Spec.DeleteMode = mode })
	if id.kind == applicationKindName {
		x.w.deleteApp(id.name)
	} else {
		x.w.deleteSessionJob(id.name)
	}
	id.deleting, id.deleteMode = true, mode
	return fmt.Sprintf("delete %s with deleteMode %s", id, mode)
}

// createAgain creates a gone object again under its name, with a new uid; half the time its first
// job starts from a savepoint (a deleted object's final one, or any).
func (x *explorer) createAgain() string {
	var gone []flavour
	for _, f := range flavours {
		if x.current[f.name] == nil {
			gone = append(gone, f)
		}
	}
	f, ok := pickOne(x, gone)
	if !ok {
		return ""
	}
	from := ""
	if x.rng.IntN(2) == 0 {
		if n := len(x.history.finalSavepoints); n > 0 && x.rng.IntN(2) == 0 {
			from = x.history.finalSavepoints[n-1]
		} else if sp, ok := pickOne(x, x.savepoints()); ok {
			from = sp.Path
		}
	}
	id := x.createObject(f, from)
	return fmt.Sprintf("create %s again, from %q", id, from)
}

func (x *explorer) changeRetention() string {
	id := x.jobOwner()
	if id == nil {
		return ""
	}
	ret := &v1beta1.SavepointRetention{Keep: int32(1 + x.rng.IntN(3)), DisposeOlder: x.rng.IntN(2) == 0}
	if x.rng.IntN(3) == 0 {
		ret.MaxAge = &metav1.Duration{Duration: time.Duration(1+x.rng.IntN(5)) * time.Minute}
	}
	x.edit(id, func(s *v1beta1.FlinkApplicationSpec) { s.SavepointRetention = ret },
		func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.SavepointRetention = ret })
	return fmt.Sprintf("%s savepointRetention %+v", id.name, *ret)
}

// createFlinkSnapshot asks for a savepoint of a live owner by a FlinkSnapshot, or registers an
// existing savepoint's path under one.
func (x *explorer) createFlinkSnapshot() string {
	id := x.jobOwner()
	if id == nil {
		return ""
	}
	x.snapshots++
	s := &v1beta1.FlinkSnapshot{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("user-%d", x.snapshots), Namespace: ns,
		CreationTimestamp: metav1.NewTime(x.w.clock.Now())},
		Spec: v1beta1.FlinkSnapshotSpec{Owner: v1beta1.SnapshotOwner{Kind: id.kind, Name: id.name}, Type: v1beta1.SnapshotSavepoint,
			DisposeOnDelete: x.rng.IntN(2) == 0, Keep: x.rng.IntN(4) == 0}}
	if x.rng.IntN(3) == 0 {
		if sp, ok := pickOne(x, x.savepoints()); ok {
			s.Spec.Path = sp.Path
		}
	}
	_, err := x.w.apps.FlinkV1beta1().FlinkSnapshots(ns).Create(context.Background(), s, metav1.CreateOptions{})
	if err != nil {
		x.t.Fatalf("creating FlinkSnapshot %s: %v", s.Name, err)
	}
	return fmt.Sprintf("create FlinkSnapshot %s of %s (path %q, disposeOnDelete %v, keep %v)", s.Name, id.name, s.Spec.Path,
		s.Spec.DisposeOnDelete, s.Spec.Keep)
}

// deleteFlinkSnapshot deletes any FlinkSnapshot, a user's or the operator's.
func (x *explorer) deleteFlinkSnapshot() string {
	var live []v1beta1.FlinkSnapshot
	for _, s := range x.snapshotsInOrder() {
		if s.DeletionTimestamp == nil {
			live = append(live, s)
		}
	}
	s, ok := pickOne(x, live)
	if !ok {
		return ""
	}
	x.w.deleteSnapshot(s.Name)
	return fmt.Sprintf("delete FlinkSnapshot %s of %s (%s, disposeOnDelete %v)", s.Name, s.Spec.Owner.Name, s.Status.Path, s.Spec.DisposeOnDelete)
}

// tearDownVersion names one of the BlueGreen application's two running versions for teardown.
func (x *explorer) tearDownVersion() string {
	id := x.current["gamma"]
	if id == nil || id.deleting {
		return ""
	}
	app := x.w.get("gamma")
	if app.Status.Phase != v1beta1.PhaseDualRunning || len(app.Status.VersionStatuses) < 2 {
		return ""
	}
	v := app.Status.VersionStatuses[x.rng.IntN(len(app.Status.VersionStatuses))]
	x.w.update("gamma", func(a *v1beta1.FlinkApplication) { a.Spec.TearDownVersionHash = v.VersionHash })
	return fmt.Sprintf("gamma tearDownVersionHash %s (%s)", v.VersionHash, v.Version)
}

// changeSessionCluster restarts the session cluster or changes its image, or in a run with HA turns
// Flink HA on or off: its jobs move across.
func (x *explorer) changeSessionCluster() string {
	if x.current[sessionClusterName] == nil {
		return ""
	}
	if x.ha && x.rng.IntN(3) == 0 {
		return x.toggleSessionClusterHA()
	}
	if x.rng.IntN(2) == 0 {
		n := x.nonce()
		x.w.updateSessionCluster(sessionClusterName, func(c *v1beta1.FlinkSessionCluster) { c.Spec.RestartNonce = v1beta1.Nonce(n) })
		return "session cluster restartNonce " + n
	}
	image := fmt.Sprintf("flink:1.20.%d", x.rng.IntN(3))
	x.w.updateSessionCluster(sessionClusterName, func(c *v1beta1.FlinkSessionCluster) { c.Spec.Image = image })
	return "session cluster image " + image
}

// snapshotsInOrder lists the FlinkSnapshots by the time of their state, then by name: the operator
// names its own after random trigger ids, so that an order by name would differ between replays.
func (x *explorer) snapshotsInOrder() []v1beta1.FlinkSnapshot {
	list := x.w.snapshots()
	sort.SliceStable(list, func(i, j int) bool {
		a, b := snapshots.TakenAt(&list[i]), snapshots.TakenAt(&list[j])
		if !a.Equal(b) {
			return a.Before(b)
		}
		return list[i].Name < list[j].Name
	})
	return list
}
