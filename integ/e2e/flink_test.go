package e2e

import (
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/integ/suite"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// This file holds the assertions on the Flink side, read from the simulator: what a user would see
// in the Flink UI and the savepoint bucket, whatever the operator's status claims.

// assertNoOverlaps fails the test if two jobs of one of its applications were ever alive at once
// (a BlueGreen application may run two, never three).
func (s *scenario) assertNoOverlaps() {
	for _, name := range s.apps {
		suite.CheckNoOverlaps(s.t, env.Fleet.Timeline(), s.appKey(name), s.blueGreen[name])
	}
}

// assertAtMostTwoAlive checks BlueGreen's invariant over the application's whole timeline so far:
// the deployed and the updating version's jobs may run at once, never a third.
func (s *scenario) assertAtMostTwoAlive(name string) {
	s.t.Helper()
	suite.CheckNoOverlaps(s.t, env.Fleet.Timeline(), s.appKey(name), true)
}

// appKey is the simulator's Timeline key of an application.
func (s *scenario) appKey(name string) string { return s.ns + "/" + name }

// timeline is every job the simulator ran for an application, in submission order.
func (s *scenario) timeline(name string) []flinksim.JobRecord {
	return env.Fleet.Timeline().Jobs(s.appKey(name))
}

// jobManager is the simulated JobManager of the application's live cluster (status.deployHash).
// Keep the pointer to look at a cluster after it is gone: a JobManager's counters survive its pod.
func (s *scenario) jobManager(app *v1beta1.FlinkApplication) *flinksim.JobManager {
	s.t.Helper()
	return s.jobManagerOf(app.Name, app.Status.DeployHash)
}

func (s *scenario) jobManagerOf(name, hash string) *flinksim.JobManager {
	s.t.Helper()
	jm := env.Fleet.JobManager(s.ns, name+"-"+hash)
	if jm == nil {
		s.t.Fatalf("no simulated JobManager is up for %s/%s-%s", s.ns, name, hash)
	}
	return jm
}

// onlyJob is the single job a JobManager lists; more or fewer fail the test.
func (s *scenario) onlyJob(jm *flinksim.JobManager) flinksim.JobInfo {
	s.t.Helper()
	jobs := jm.Jobs()
	if len(jobs) != 1 {
		s.t.Fatalf("JobManager %s lists %d jobs, want exactly 1: %s", jm.Name(), len(jobs), formatJobs(jobs))
	}
	return jobs[0]
}

// jobByID is the job with this id on a JobManager; a missing one fails the test.
func (s *scenario) jobByID(jm *flinksim.JobManager, id string) flinksim.JobInfo {
	s.t.Helper()
	for _, j := range jm.Jobs() {
		if j.ID == id {
			return j
		}
	}
	s.t.Fatalf("JobManager %s has no job %s: %s", jm.Name(), id, formatJobs(jm.Jobs()))
	return flinksim.JobInfo{}
}

// assertRunningJob checks that the job runs with all its tasks at the given parallelism.
func (s *scenario) assertRunningJob(job flinksim.JobInfo, parallelism int) {
	s.t.Helper()
	if job.State != "RUNNING" || !job.TasksRunning || job.Parallelism != parallelism {
		s.t.Errorf("job %s is %s (tasks running %v) with parallelism %d; want RUNNING, all tasks running, parallelism %d",
			job.ID, job.State, job.TasksRunning, job.Parallelism, parallelism)
	}
}

// assertSavepointOf checks that path is a savepoint, still in storage, taken of the job oldJobID.
func (s *scenario) assertSavepointOf(path, oldJobID string) {
	s.t.Helper()
	snap, ok := env.Fleet.Storage().Get(path)
	switch {
	case path == "":
		s.t.Errorf("no restore path; want a savepoint of job %s", oldJobID)
	case !ok:
		s.t.Errorf("%s is not in the simulator's storage", path)
	case !snap.Savepoint || snap.JobID != oldJobID:
		s.t.Errorf("%s is a snapshot of job %s (savepoint %v); want a savepoint of job %s", path, snap.JobID, snap.Savepoint, oldJobID)
	}
}

// assertSavepointTriggers checks how many savepoints a JobManager was asked for.
func (s *scenario) assertSavepointTriggers(jm *flinksim.JobManager, want int) {
	s.t.Helper()
	if got := jm.SavepointTriggers(); got != want {
		s.t.Errorf("JobManager %s got %d savepoint triggers, want %d", jm.Name(), got, want)
	}
}

// assertStableBefore checks that a job had been RUNNING for the whole jobStabilizationPeriod by the
// time the operator was seen to count it as started: a job that fails within that period must still
// be caught (and rolled back) by the phase that started it.
func (s *scenario) assertStableBefore(name, jobID string, seen time.Time) {
	s.t.Helper()
	r := s.record(name, jobID)
	var runningSince time.Time
	for _, c := range r.States {
		if c.State == "RUNNING" {
			runningSince = c.Time
		}
	}
	if runningSince.IsZero() || seen.Sub(runningSince) < jobStabilizationPeriod {
		s.t.Errorf("job %s (%s) counted as started %v after it began RUNNING; want at least jobStabilizationPeriod %s",
			jobID, states(r), seen.Sub(runningSince).Round(time.Millisecond), jobStabilizationPeriod)
	}
}

// record is the timeline entry of a job; a missing one fails the test.
func (s *scenario) record(name, jobID string) flinksim.JobRecord {
	s.t.Helper()
	for _, r := range s.timeline(name) {
		if r.JobID == jobID {
			return r
		}
	}
	s.t.Fatalf("the simulator never ran job %s of %s", jobID, name)
	return flinksim.JobRecord{}
}

// reached tells whether a job went through state.
func reached(r flinksim.JobRecord, state string) bool {
	for _, c := range r.States {
		if c.State == state {
			return true
		}
	}
	return false
}

func states(r flinksim.JobRecord) string {
	var out []string
	for _, c := range r.States {
		out = append(out, c.State)
	}
	return strings.Join(out, ">")
}

func formatJobs(jobs []flinksim.JobInfo) string {
	var out []string
	for _, j := range jobs {
		out = append(out, fmt.Sprintf("%s %s p=%d from %q", j.ID, j.State, j.Parallelism, j.RestoredFrom))
	}
	return "[" + strings.Join(out, "; ") + "]"
}

// waitClusterGone waits until the Deployments and the Service of one cluster are deleted.
func (s *scenario) waitClusterGone(name, hash string) {
	s.t.Helper()
	s.eventually(fmt.Sprintf("cluster %s-%s deleted", name, hash), func() (bool, string) {
		for _, d := range []string{name + "-" + hash + "-jm", name + "-" + hash + "-tm"} {
			if _, err := env.Kube.AppsV1().Deployments(s.ns).Get(s.ctx, d, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, fmt.Sprintf("Deployment %s still there (err %v)", d, err)
			}
		}
		if _, err := env.Kube.CoreV1().Services(s.ns).Get(s.ctx, name+"-"+hash, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, fmt.Sprintf("Service %s-%s still there (err %v)", name, hash, err)
		}
		return true, ""
	})
}

// assertJobCount checks how many jobs the simulator ever ran for an application, and returns them:
// a job recovered by Flink HA is the same job, not a second one.
func (s *scenario) assertJobCount(name string, want int) []flinksim.JobRecord {
	s.t.Helper()
	jobs := s.timeline(name)
	if len(jobs) != want {
		var ids []string
		for _, j := range jobs {
			ids = append(ids, fmt.Sprintf("%s (%s)", j.JobID, states(j)))
		}
		s.t.Fatalf("the simulator ran %d jobs of %s, want %d: %s", len(jobs), name, want, strings.Join(ids, "; "))
	}
	return jobs
}
