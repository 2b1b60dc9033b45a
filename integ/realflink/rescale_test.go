package realflink

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/integ/localenv"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// Rescales on real Flink: with scaleMode InPlace and the adaptive scheduler, a parallelism change
// keeps the cluster and the job (PUT /jobs/:id/resource-requirements), and the job goes on with its
// state at the new parallelism; with the default scheduler the job is stopped with a savepoint and
// started again on the same cluster, with exactly that state. A Stateless upgrade then starts a job
// without state.
func TestRescalesAndAStatelessUpgradeOnRealFlink(t *testing.T) {
	env, fleet, releases := operatorOnRealFlink(t)
	for _, r := range releases {
		t.Run(r.name, func(t *testing.T) {
			t.Run("adaptive", func(t *testing.T) { rescales(t, env, fleet, r, true) })
			t.Run("default", func(t *testing.T) { rescales(t, env, fleet, r, false) })
		})
	}
}

func rescales(t *testing.T, env *localenv.Env, fleet *Fleet, r realRelease, adaptive bool) {
	ctx := context.Background()
	began := time.Now()
	ns := realNamespace(t, env)
	out := t.TempDir()
	app := lyftManifest(t, ns, r, out)
	app.Name = "rescale"
	app.Spec.ScaleMode = v1beta1.ScaleModeInPlace
	if adaptive {
		app.Spec.FlinkConfig["jobmanager.scheduler"] = "adaptive"
	}
	s := &lifecycle{t: t, env: env, fleet: fleet, ns: ns, name: app.Name, out: out, api: client.New(client.DefaultConfig(), nil)}
	s.create(app)
	job := s.awaitNewJob("", "")
	s.awaitCheckpoints(job, 2)

	s.update(func(a *v1beta1.FlinkApplication) { a.Spec.Parallelism = 3 })
	var rescaled realJob
	if adaptive {
		// The same job, every vertex at the new parallelism.
		eventually(t, 4*time.Minute, "job "+job.id+" rescaled to 3 in place", func() (bool, error) {
			a := s.current()
			if a.Status.Phase != v1beta1.PhaseRunning || a.Status.JobStatus.JobID != job.id {
				return false, nil
			}
			j, err := s.api.GetJob(ctx, job.url, job.id)
			if err != nil || j.State != client.JobRunning {
				return false, err
			}
			for _, v := range j.Vertices {
				if strings.Contains(v.Name, "counter") && v.Parallelism != 3 {
					return false, nil
				}
			}
			return true, nil
		})
		if a := s.current(); a.Status.DeployHash != job.hash || a.Status.JobStatus.JobID != job.id {
			t.Fatalf("rescaled in place, the application runs job %s on %s; want job %s on %s still",
				a.Status.JobStatus.JobID, a.Status.DeployHash, job.id, job.hash)
		}
		o, err := ReadJobOutput(out, job.id)
		if err != nil {
			t.Fatal(err)
		}
		check(t, o.CheckCounts(testKeys))
		rescaled = job
	} else {
		rescaled = s.awaitNewJob(job.id, "")
		if rescaled.hash != job.hash {
			t.Errorf("the rescale moved the job to cluster %s; want it on %s still", rescaled.hash, job.hash)
		}
		s.checkWentOnExactly(job, rescaled, true)
	}

	// A Stateless upgrade: the new job starts from nothing.
	s.awaitCheckpoints(rescaled, 2)
	s.update(func(a *v1beta1.FlinkApplication) {
		a.Spec.UpgradeMode = v1beta1.UpgradeModeStateless
		a.Spec.ProgramArgs = strings.Replace(a.Spec.ProgramArgs, "--rate 200", "--rate 150", 1)
	})
	fresh := s.awaitNewJob(rescaled.id, "")
	if fresh.restored != nil {
		t.Errorf("the Stateless upgrade's job %s restored %+v; want no state", fresh.id, fresh.restored)
	}
	o, err := ReadJobOutput(out, fresh.id)
	if err != nil {
		t.Fatal(err)
	}
	upTo, _ := o.ResumePosition(fresh.later.ID)
	check(t, o.CheckCounts(testKeys), o.CheckExactlyFrom(0, upTo))
	t.Logf("Flink %s (adaptive %v): a rescale and a Stateless upgrade in %s", r.dist.Version, adaptive, time.Since(began).Round(time.Second))

	s.deleteAndWait()
}
