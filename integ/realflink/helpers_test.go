package realflink

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// RealFlinkEnv names the releases the real-Flink tests run on ("1.20 2.3"); unset, they are skipped.
// make test-flink sets it from FLINK_VERSIONS.
const RealFlinkEnv = "FLINKFSM_REAL_FLINK"

// eachRelease runs f on every release RealFlinkEnv names, each in a subtest skipped with the reason
// when the release or its test job is not in the cache.
func eachRelease(t *testing.T, f func(t *testing.T, d Dist, jar string)) {
	names := strings.FieldsFunc(os.Getenv(RealFlinkEnv), func(r rune) bool { return r == ',' || r == ' ' })
	if len(names) == 0 {
		t.Skipf("real Flink is opt-in: %s=\"1.20 2.3\" (make test-flink) runs these tests on the releases "+
			"hack/flink-dist.sh cached", RealFlinkEnv)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			d, err := FindDist(name)
			if err != nil {
				t.Skip(err)
			}
			jar, err := d.TestJobJar()
			if err != nil {
				t.Skip(err)
			}
			f(t, d, jar)
		})
	}
}

func newID(t *testing.T) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// eventually polls check every 200 ms until it returns true or the timeout passes; check's error
// ends the wait at once.
func eventually(t *testing.T, timeout time.Duration, what string, check func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ok, err := check()
		if ok {
			return
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (last error: %v)", what, timeout, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// awaitJobState waits until the job is in state; a job that fails instead ends the test with its
// exceptions.
func awaitJobState(t *testing.T, api client.API, c *Cluster, jobID, state string, timeout time.Duration) *client.JobDetails {
	t.Helper()
	var job *client.JobDetails
	eventually(t, timeout, "job "+jobID+" "+state, func() (bool, error) {
		j, err := api.GetJob(context.Background(), c.URL, jobID)
		if err != nil {
			return false, err
		}
		job = j
		if j.State == client.JobFailed && state != client.JobFailed {
			ex, _ := api.GetJobExceptions(context.Background(), c.URL, jobID)
			t.Fatalf("job %s FAILED, waiting for %s: %+v", jobID, state, ex)
		}
		return j.State == state, nil
	})
	return job
}

// awaitTasksRunning waits until every subtask of the job runs: a RUNNING job's tasks may still be
// deploying.
func awaitTasksRunning(t *testing.T, api client.API, c *Cluster, jobID string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "every task of job "+jobID+" running", func() (bool, error) {
		j, err := api.GetJob(context.Background(), c.URL, jobID)
		if err != nil || j.State != client.JobRunning || len(j.Vertices) == 0 {
			return false, err
		}
		for _, v := range j.Vertices {
			if int32(v.Tasks.Running) != v.Parallelism {
				return false, nil
			}
		}
		return true, nil
	})
}

// awaitSavepoint polls a savepoint operation until it is over.
func awaitSavepoint(t *testing.T, api client.API, c *Cluster, jobID, triggerID string, timeout time.Duration) *client.SavepointStatus {
	t.Helper()
	var st *client.SavepointStatus
	eventually(t, timeout, "savepoint "+triggerID+" of job "+jobID, func() (bool, error) {
		s, err := api.GetSavepointStatus(context.Background(), c.URL, jobID, triggerID)
		if err != nil {
			return false, err
		}
		st = s
		return !s.InProgress(), nil
	})
	return st
}

// awaitCheckpointAfterRestore waits until the job completed a checkpoint after the state it was
// restored from, and returns both.
func awaitCheckpointAfterRestore(t *testing.T, api client.API, url, jobID string) (*client.RestoredCheckpoint, *client.Checkpoint) {
	t.Helper()
	var restored *client.RestoredCheckpoint
	var later *client.Checkpoint
	eventually(t, 2*time.Minute, "a checkpoint of job "+jobID+" after its restore", func() (bool, error) {
		st, err := api.GetCheckpoints(context.Background(), url, jobID)
		if err != nil {
			return false, err
		}
		restored, later = st.Latest.Restored, st.Latest.Completed
		return restored != nil && later != nil && later.ID > restored.ID, nil
	})
	return restored, later
}
