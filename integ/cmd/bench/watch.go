package main

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
)

// recorder follows every FlinkApplication through one watch and stamps each change with the time
// it arrived. Status times are stored in whole seconds by the API server, too coarse to split a
// 3-second update into phases; a watch event arrives within milliseconds of the write.
type recorder struct {
	mu   sync.Mutex
	apps map[string]*track // by "<namespace>/<name>"
}

// track is what the watch saw of one application.
type track struct {
	last *v1beta1.FlinkApplication
	// phases holds one entry per phase change seen.
	phases []phaseAt
	// writes are the application's new resourceVersions after its creation: every status write
	// (and any other change) of the object.
	writes []write
}

// write is one new resourceVersion: when it arrived, which status fields it changed and what it did
// to the ledger's savepoints, so that a steady state that writes too much says what it writes.
type write struct {
	at         time.Time
	changed    []string
	savepoints ledgerChange
}

type phaseAt struct {
	phase v1beta1.FlinkApplicationPhase
	at    time.Time
}

func newRecorder() *recorder { return &recorder{apps: map[string]*track{}} }

// run lists and then watches FlinkApplications in all namespaces until ctx ends, resuming the
// watch from the last resourceVersion when the API server closes it and listing again when that
// resourceVersion has expired (follow). A list is the whole truth: an application it no longer
// has was deleted meanwhile, which the waits for a fleet's deletion read.
func (r *recorder) run(ctx context.Context, apps versioned.Interface) error {
	client := apps.FlinkV1beta1().FlinkApplications("")
	return follow(ctx, func(ctx context.Context) (string, error) {
		list, err := client.List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", err
		}
		now := time.Now()
		listed := make(map[string]bool, len(list.Items))
		for i := range list.Items {
			r.observe(watch.Added, &list.Items[i], now)
			listed[list.Items[i].Namespace+"/"+list.Items[i].Name] = true
		}
		r.forgetAllBut(listed)
		return list.ResourceVersion, nil
	}, client.Watch, func(kind watch.EventType, app *v1beta1.FlinkApplication) { r.observe(kind, app, time.Now()) })
}

// forgetAllBut drops the applications a list no longer has, as a Deleted event would have.
func (r *recorder) forgetAllBut(listed map[string]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range r.apps {
		if !listed[k] {
			delete(r.apps, k)
		}
	}
}

// follow lists (list hands every object to the caller and returns the list's resourceVersion),
// then watches from there until ctx ends, handing each object of type T to on with its event's
// type. The RetryWatcher resumes a watch the API server closed, but not one whose resourceVersion
// expired (410 Gone; at 10,000 applications the local cluster compacts every minute): it ends
// instead, and the bench would have gone on blind, every later write uncounted. So follow lists
// again and watches from the new list; an object written meanwhile shows as one write, seen at the
// list.
func follow[T runtime.Object](ctx context.Context, list func(context.Context) (string, error),
	watchFrom func(context.Context, metav1.ListOptions) (watch.Interface, error), on func(watch.EventType, T)) error {
	rv, err := list(ctx)
	if err != nil {
		return err
	}
	lw := &cache.ListWatch{WatchFuncWithContext: watchFrom}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, rv, lw)
	if err != nil {
		return err
	}
	go func() {
		for {
			watchUntilEnd(ctx, w, on)
			w.Stop()
			if ctx.Err() != nil {
				return
			}
			for {
				if rv, err = list(ctx); err == nil {
					if w, err = watchtools.NewRetryWatcherWithContext(ctx, rv, lw); err == nil {
						break
					}
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
			}
		}
	}()
	return nil
}

// watchUntilEnd hands w's objects of type T to on until ctx ends or w does.
func watchUntilEnd[T runtime.Object](ctx context.Context, w *watchtools.RetryWatcher, on func(watch.EventType, T)) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			if obj, isT := ev.Object.(T); isT {
				on(ev.Type, obj)
			}
		}
	}
}

func (r *recorder) observe(kind watch.EventType, app *v1beta1.FlinkApplication, at time.Time) {
	key := app.Namespace + "/" + app.Name
	r.mu.Lock()
	defer r.mu.Unlock()
	if kind == watch.Deleted {
		delete(r.apps, key)
		return
	}
	t := r.apps[key]
	if t == nil {
		t = &track{}
		r.apps[key] = t
	}
	if t.last != nil && t.last.ResourceVersion != app.ResourceVersion {
		t.writes = append(t.writes, write{at, changedFields(t.last, app), changeOfLedger(t.last.Status.Ledger, app.Status.Ledger)})
	}
	if n := len(t.phases); n == 0 || t.phases[n-1].phase != app.Status.Phase {
		t.phases = append(t.phases, phaseAt{app.Status.Phase, at})
	}
	t.last = app
}

// runningSince is when the watch first saw the application Running, with a job running, on a
// cluster other than notHash, at or after from; ok is false until then.
func (r *recorder) runningSince(key string, from time.Time, notHash string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.apps[key]
	if t == nil || !isRunning(t.last, notHash) {
		return time.Time{}, false
	}
	// The current Running spell began at the last phase change into Running.
	for i := len(t.phases) - 1; i >= 0; i-- {
		if t.phases[i].phase != v1beta1.PhaseRunning {
			break
		}
		if t.phases[i].at.Before(from) {
			return from, true
		}
		return t.phases[i].at, true
	}
	return time.Time{}, false
}

func isRunning(app *v1beta1.FlinkApplication, notHash string) bool {
	if app == nil {
		return false
	}
	st := app.Status
	return st.Phase == v1beta1.PhaseRunning && st.DeployHash != "" && st.DeployHash != notHash &&
		st.JobStatus.JobID != "" && st.JobStatus.State == v1beta1.JobRunning
}

// latest is the last version of the application the watch saw.
func (r *recorder) latest(key string) *v1beta1.FlinkApplication {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.apps[key]; t != nil {
		return t.last
	}
	return nil
}

// phasesBetween are the phase changes seen in [from, to], preceded by the phase the application
// was in at from.
func (r *recorder) phasesBetween(key string, from, to time.Time) []phaseAt {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.apps[key]
	if t == nil {
		return nil
	}
	var out []phaseAt
	for i, p := range t.phases {
		switch {
		case p.at.After(to):
			return out
		case !p.at.Before(from):
			out = append(out, p)
		case i+1 == len(t.phases) || !t.phases[i+1].at.Before(from):
			out = append(out, phaseAt{p.phase, from})
		}
	}
	return out
}

// phaseEntries is, for each phase, when each application first entered it after since (seconds
// since since): where a fleet spends its time on the way to Running.
func (r *recorder) phaseEntries(keys []string, since time.Time) map[string][]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]float64{}
	for _, k := range keys {
		t := r.apps[k]
		if t == nil {
			continue
		}
		seen := map[v1beta1.FlinkApplicationPhase]bool{}
		for _, p := range t.phases {
			if p.at.Before(since) || seen[p.phase] {
				continue
			}
			seen[p.phase] = true
			name := string(p.phase)
			if name == "" {
				name = "(no status yet)"
			}
			out[name] = append(out[name], p.at.Sub(since).Seconds())
		}
	}
	return out
}

// writesBetween counts the new resourceVersions seen in [from, to) for the given applications,
// and how often each status field changed in them.
func (r *recorder) writesBetween(keys []string, from, to time.Time) (int, map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, fields := 0, map[string]int{}
	for _, k := range keys {
		if t := r.apps[k]; t != nil {
			for _, w := range t.writes {
				if !w.at.Before(from) && w.at.Before(to) {
					n++
					for _, f := range w.changed {
						fields[f]++
					}
				}
			}
		}
	}
	return n, fields
}

// writesPerSecond is how the writes of some applications in a window spread over its seconds: the
// most in any one second, and the share of the window's seconds that saw any. Checkpoint records
// of jobs created together come due together, and a burst of writes queues in the API server.
func (r *recorder) writesPerSecond(keys []string, from, to time.Time) (most int, busyShare float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	perSecond := map[int64]int{}
	for _, k := range keys {
		if t := r.apps[k]; t != nil {
			for _, w := range t.writes {
				if !w.at.Before(from) && w.at.Before(to) {
					perSecond[int64(w.at.Sub(from)/time.Second)]++
				}
			}
		}
	}
	for _, n := range perSecond {
		most = max(most, n)
	}
	if seconds := to.Sub(from).Seconds(); seconds >= 1 {
		busyShare = float64(len(perSecond)) / seconds
	}
	return most, busyShare
}

// ownerWrites are the writes of some applications in a window, told apart by what they did to
// savepoints.
type ownerWrites struct {
	// all counts every write; forSavepoints, those that changed a savepoint entry of the ledger.
	all, forSavepoints int
	// byStage counts writes by ledgerChange.stages ("" for a write that changed none).
	byStage map[string]int
	// asked and ended count savepoint entries that appeared and that ended; failed, those that ended
	// Failed.
	asked, ended, failed int
}

// savepointWritesBetween is what writesBetween counts, told apart by what the writes did to
// savepoints.
func (r *recorder) savepointWritesBetween(keys []string, from, to time.Time) ownerWrites {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := ownerWrites{byStage: map[string]int{}}
	for _, k := range keys {
		t := r.apps[k]
		if t == nil {
			continue
		}
		for _, w := range t.writes {
			if w.at.Before(from) || !w.at.Before(to) {
				continue
			}
			stages := w.savepoints.stages()
			out.all++
			out.byStage[stages]++
			if stages != "" {
				out.forSavepoints++
			}
			out.asked += w.savepoints.Asked
			out.ended += w.savepoints.Ended
			out.failed += w.savepoints.Failed
		}
	}
	return out
}

// changedFields names the status fields that differ between two versions, one level into objects
// ("jobStatus.lastCheckpointTime"); "metadata/spec" when the status did not change at all.
func changedFields(before, after *v1beta1.FlinkApplication) []string {
	var a, b map[string]any
	if !decode(before.Status, &a) || !decode(after.Status, &b) {
		return []string{"status"}
	}
	var out []string
	for k := range union(a, b) {
		if reflect.DeepEqual(a[k], b[k]) {
			continue
		}
		inA, okA := a[k].(map[string]any)
		inB, okB := b[k].(map[string]any)
		if !okA || !okB {
			out = append(out, k)
			continue
		}
		for k2 := range union(inA, inB) {
			if !reflect.DeepEqual(inA[k2], inB[k2]) {
				out = append(out, k+"."+k2)
			}
		}
	}
	if len(out) == 0 {
		return []string{"metadata/spec"}
	}
	sort.Strings(out)
	return out
}

func decode(v any, into *map[string]any) bool {
	data, err := json.Marshal(v)
	return err == nil && json.Unmarshal(data, into) == nil
}

func union(a, b map[string]any) map[string]bool {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}

// waitFor polls cond, which reads the recorder, until it holds or ctx ends. The times measured
// come from the watch, so the polling interval does not blur them.
func waitFor(ctx context.Context, what string, cond func() bool) error {
	return waitForEvery(ctx, what, 50*time.Millisecond, cond)
}

// waitForEvery is waitFor looking every tick.
func waitForEvery(ctx context.Context, what string, every time.Duration, cond func() bool) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}
