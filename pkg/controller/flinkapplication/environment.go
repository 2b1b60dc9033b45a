package flinkapplication

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessionjob"
)

// Environment is what reconciles share (kindpass.Environment: clients, clock, configuration, the
// caches' readers and what every kind remembers between passes), with what only this package's
// kinds remember. Tests build one from fakes; the controller builds one from informers.
type Environment struct {
	kindpass.Environment

	// sessionJobs is what the FlinkSessionJob kind keeps: its jars' transfers in flight.
	sessionJobs sessionjob.Memory
	// hashes remembers each application's cluster hash by the resourceVersion it was computed from
	// (object_memory.go).
	hashes clusterHashes
	// autoscaling keeps the autoscaler's samples of each autoscaled job (autoscaler_metrics.go).
	autoscaling autoscalerMemory
	// quiet remembers each application whose move into Submitting is not written yet
	// (quiet_submission.go).
	quiet sync.Map
}

// Observer reads an application and the objects it owns, normally from informer caches
// (watch.Listers).
type Observer = kindpass.Observer

// SessionObserver reads session clusters and session jobs, normally from informer caches.
type SessionObserver = kindpass.SessionObserver

// staleCache tells whether the cached object predates our own last status write (fsm.OwnWrites).
func (e *Environment) staleCache(kind string, obj metav1.Object) bool { return e.StaleCache(kind, obj) }

func (e *Environment) forgetApp(key string) {
	e.Forget(key)
	e.quiet.Delete(key)
	e.autoscaling.forget(key)
	e.hashes.forget(key)
}

// wakeLater is what wakes the object of a pass once something it started off the worker ends.
func (e *Environment) wakeLater(rc *Context) func() { return e.WakeLater(rc.Pass) }
