package flinkapplication

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// crashAtStatusWrite kills the operator at the k-th status write that counts (none when k is 0):
// that write is lost and a new operator process, remembering nothing of the old one, makes the next
// pass. counts tells which writes count; nil counts all. It returns the count so far.
func (w *world) crashAtStatusWrite(k int, counts func(patch []byte) bool) *int {
	n := 0
	w.apps.PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "status" {
			return false, nil, nil
		}
		if counts != nil && !counts(a.(k8stesting.PatchAction).GetPatch()) {
			return false, nil, nil
		}
		n++
		if n == k {
			w.restartOperator()
			return true, nil, errors.New("operator killed before the status write")
		}
		return false, nil, nil
	})
	return &n
}

// recordsADecision tells whether a status patch records more than what the pass observed (the
// job's state and counters, the cluster's, the conditions): a phase, a hash, a savepoint trigger or
// path, a job id or submission, the retry state or the last stable spec.
func recordsADecision(patch []byte) bool {
	var doc struct {
		Status map[string]json.RawMessage `json:"status"`
	}
	if err := json.Unmarshal(patch, &doc); err != nil {
		return true
	}
	for key, v := range doc.Status {
		switch key {
		case "clusterStatus", "conditions", "lastUpdatedAt", "reason", "observedGeneration":
		case "jobStatus":
			var js map[string]json.RawMessage
			if json.Unmarshal(v, &js) != nil {
				return true
			}
			for k := range js {
				if k == "jobID" || k == "clusterHash" || k == "submittedAt" {
					return true
				}
			}
		default:
			return true
		}
	}
	return false
}

// crashPath is a path of the crash tables, played in a world.
type crashPath struct {
	name string
	play func(t *testing.T, w *world)
}

func crashPaths() []crashPath {
	var paths []crashPath
	for _, c := range lifecyclePaths() {
		paths = append(paths, crashPath{c.name, c.play})
	}
	for _, c := range updatePaths() {
		paths = append(paths, crashPath{c.name + ", then delete", c.play})
	}
	return append(paths, crashPath{"BlueGreen update and promotion", playBlueGreenPromotion},
		crashPath{"BlueGreen Auto promotion, then delete during the teardown delay", playAutoPromotionThenDelete},
		crashPath{"a manual savepoint in flight across an update, then suspend and resume", playSavepointsAcrossStops},
		crashPath{"the autoscaler rescales by restarting the job, which fails and goes back", playAutoscalerRestartAndWayBack},
		crashPath{"two session jobs: upload, run, Savepoint and LastState updates, suspend, resume, delete", playSessionJobs})
}

// maxCrashes bounds the runs of one path: a path with more status writes (a job that keeps
// restarting updates its counters at every pass) is killed only at each write that records a
// decision, which keeps the package's tests within a minute on two cores.
const maxCrashes = 60

// TestCrashAtEachStatusWriteAlongTheCrashPaths plays each path of the crash tables once to count
// its status writes, then once more for each of them with the operator killed at that write and
// restarted. Whichever write is lost, Flink must see what the path promises: each savepoint and
// each job once, never two jobs at once, and the last job restored from the promised state.
func TestCrashAtEachStatusWriteAlongTheCrashPaths(t *testing.T) {
	start := time.Now()
	runs := 0
	for _, p := range crashPaths() {
		t.Run(p.name, func(t *testing.T) {
			w := newWorld(t)
			writes := w.crashAtStatusWrite(0, nil)
			decisions := w.crashAtStatusWrite(0, recordsADecision)
			p.play(t, w)
			if t.Failed() {
				t.FailNow()
			}
			n, counts, what := *writes, func([]byte) bool { return true }, "write"
			if n > maxCrashes {
				n, counts, what = *decisions, recordsADecision, "decision write"
			}
			t.Logf("%d status writes, %d of them record decisions", *writes, *decisions)
			for k := 1; k <= n; k++ {
				runs++
				t.Run(fmt.Sprintf("killed at %s %d of %d", what, k, n), func(t *testing.T) {
					w := newWorld(t)
					w.crashAtStatusWrite(k, counts)
					p.play(t, w)
				})
			}
		})
	}
	t.Logf("%d crashed runs in %s", runs, time.Since(start).Round(time.Millisecond))
}
