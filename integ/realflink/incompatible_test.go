package realflink

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/localenv"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// An update to a build that cannot take the running job's state fails on real Flink, and the
// operator rolls back: the previous spec runs again on its cluster, restored from the update's
// savepoint with exactly the state it held, and the application rests in DeployFailed. Both ways a
// restore fails are tried: a changed operator uid (the JobMaster refuses the savepoint at once) and
// a changed state type (the task fails as it opens its state, and Flink restarts it again and again).
func TestAnUpdateThatCannotRestoreTheStateRollsBackOnRealFlink(t *testing.T) {
	env, fleet, releases := operatorOnRealFlink(t)
	for _, r := range releases {
		t.Run(r.name, func(t *testing.T) { incompatibleUpdates(t, env, fleet, r) })
	}
}

func incompatibleUpdates(t *testing.T, env *localenv.Env, fleet *Fleet, r realRelease) {
	ctx := context.Background()
	began := time.Now()
	ns := realNamespace(t, env)
	out := t.TempDir()
	app := lyftManifest(t, ns, r, out)
	app.Name = "incompatible"
	normalArgs := app.Spec.ProgramArgs
	// A job that restarts for ever never runs stable: a minute is enough to tell (3 by default).
	minute := int32(60)
	app.Spec.ReadinessTimeoutSeconds = &minute
	s := &lifecycle{t: t, env: env, fleet: fleet, ns: ns, name: app.Name, out: out, api: client.New(client.DefaultConfig(), nil)}
	apps := env.Apps.FlinkV1beta1().FlinkApplications(ns)
	s.create(app)
	job := s.awaitNewJob("", "")

	for _, variant := range []string{"incompatible-uid", "incompatible-state"} {
		s.awaitCheckpoints(job, 2)
		s.update(func(a *v1beta1.FlinkApplication) { a.Spec.ProgramArgs = normalArgs + " --variant " + variant })
		// From DeployFailed (the first variant's rollback) to DeployFailed again, with another job.
		var failed *v1beta1.FlinkApplication
		eventually(t, 5*time.Minute, "DeployFailed after a rollback ("+variant+")", func() (bool, error) {
			a, err := apps.Get(ctx, app.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			failed = a
			return a.Status.Phase == v1beta1.PhaseDeployFailed && a.Status.JobStatus.JobID != "" && a.Status.JobStatus.JobID != job.id &&
				a.Status.JobStatus.State == v1beta1.JobRunning, nil
		})
		if failed.Status.DeployHash != job.hash {
			t.Fatalf("%s: after the rollback the job runs on %s; want the previous cluster %s", variant, failed.Status.DeployHash, job.hash)
		}
		t.Logf("%s: rolled back: %s", variant, failed.Status.Reason)
		rolledBack := s.awaitJobIn(v1beta1.PhaseDeployFailed, job.id, "")
		s.checkWentOnExactly(job, rolledBack, true)
		job = rolledBack
	}
	s.deleteAndWait()
	t.Logf("Flink %s: two failed restores rolled back in %s; %s", r.dist.Version, time.Since(began).Round(time.Second), fleet.Memory())
}
