package flinkapplication

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// A jar host that answers slowly holds no worker: the pass that starts the fetch returns at once and
// the session job waits in Submitting saying so; when the fetch ends, the object is woken and the
// job runs (issue 25 item 3: the fetch ran inside the pass for up to jars.timeout).
func TestASlowJarHostHoldsNoWorker(t *testing.T) {
	w := newWorld(t)
	w.withSessions()
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		<-release
		_, _ = rw.Write(testJarBytes)
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	woken := make(chan string, 10)
	w.env.Wake = func(kind, namespace, name string) { woken <- kind + "/" + name }
	w.createSessionCluster(sessionCluster("session"))
	w.createSessionJob(sessionJob("a", "session", slow.URL+"/wordcount.jar", v1beta1.UpgradeModeSavepoint))
	w.runSessionsUntil("a fetches its jar", func() bool {
		return w.sessionJobIn("a", v1beta1.SessionJobSubmitting) && w.sessionJob("a").Status.Reason == `fetching jar "`+slow.URL+`/wordcount.jar"`
	})

	passed := make(chan struct{})
	go func() {
		for i := 0; i < 5; i++ {
			w.reconcileSessions()
		}
		close(passed)
	}()
	select {
	case <-passed:
	case <-time.After(30 * time.Second):
		t.Fatal("passes wait for the jar host")
	}
	assert.Equal(t, v1beta1.SessionJobSubmitting, w.sessionJob("a").Status.Phase, "the job waits in its phase")

	close(release)
	select {
	case who := <-woken:
		assert.Equal(t, "FlinkSessionJob/a", who, "the fetch wakes its object when it ends")
	case <-time.After(30 * time.Second):
		t.Fatal("the fetch never woke its object")
	}
	w.runSessionsUntil("a runs", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobRunning) })
	require.Contains(t, eventReasons(w.events()), "JarUploaded")
}

// A JobManager that never answers an upload holds no worker either: the upload runs with the fetch,
// off the worker, and the job waits in its phase until the client gives up on it; the next pass then
// starts the transfer again.
func TestAHungJobManagerUploadHoldsNoWorker(t *testing.T) {
	w := newWorld(t)
	jar := w.withSessions()
	w.env.Flink = client.New(client.Config{SubmitTimeout: 2 * time.Second}, nil)
	w.timings = flinksim.Timings{}
	w.createSessionCluster(sessionCluster("session"))
	w.runSessionsUntil("the cluster runs", func() bool {
		c := w.sessionCluster("session")
		return c.Status.Phase == v1beta1.SessionClusterRunning && w.jms["session-"+c.Status.DeployHash] != nil
	})
	jm := w.jms["session-"+w.sessionCluster("session").Status.DeployHash]
	jm.SetFaults(flinksim.Faults{Hang: map[string]bool{flinksim.EndpointJarUpload: true}})
	w.createSessionJob(sessionJob("a", "session", jar, v1beta1.UpgradeModeSavepoint))

	passed := make(chan struct{})
	go func() {
		for i := 0; i < 10; i++ {
			w.reconcileSessions()
		}
		close(passed)
	}()
	select {
	case <-passed:
	case <-time.After(time.Second):
		t.Fatal("passes wait for the hung upload")
	}
	assert.Equal(t, v1beta1.SessionJobSubmitting, w.sessionJob("a").Status.Phase, "the job waits in its phase")

	jm.SetFaults(flinksim.Faults{})
	// The hung upload ends at the client's timeout, in real time; the passes go on meanwhile.
	for deadline := time.Now().Add(30 * time.Second); !w.sessionJobIn("a", v1beta1.SessionJobRunning); {
		require.True(t, time.Now().Before(deadline), "a never ran once the JobManager answered: %s", w.describeSessions())
		w.reconcileSessions()
		time.Sleep(10 * time.Millisecond)
	}
}
