package flinkapplication

import (
	"context"
	"regexp"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// What the explorer remembers across a run, so that a check can ask what existed or was known at an
// earlier time: every snapshot Storage ever held (Flink subsumes checkpoints, the operator disposes
// of savepoints), the states of each job the operator recorded and since when, and the paths each
// FlinkSnapshot showed.

// stateHistory is the run's memory of durable state.
type stateHistory struct {
	// seen is every snapshot Storage held, by normalized path.
	seen map[string]flinksim.Snapshot
	// disposed are the paths the operator asked Flink to dispose of, with when.
	disposed map[string]time.Time
	// known are the states of each job that some status recorded, by job id.
	known map[string][]knownState
	// snapshotPaths are the paths each FlinkSnapshot showed, by name.
	snapshotPaths map[string]map[string]bool
	// vanished is when each snapshot Storage held was first seen gone, by normalized path.
	vanished map[string]time.Time
	// finalSavepoints are the final savepoints objects recorded, newest last.
	finalSavepoints []string
	// restoreChecked are the jobs whose start invariant 2 has checked.
	restoreChecked map[string]bool
	// tornDown are the jobs of BlueGreen versions torn down, as status.lastTeardown named them.
	tornDown map[string]bool
	// promoted are the jobs some application status recorded as its stable deployment's.
	promoted map[string]bool
	// storageChanges is Storage's count of changes when seen and vanished were last brought up to
	// date, and storageRead whether they were: Storage is read again only when it moved.
	storageChanges uint64
	storageRead    bool
	// normal are normalized paths, by path, for the ones Storage holds.
	normal map[string]string
}

// knownState is a state of a job as the operator recorded it.
type knownState struct {
	path string
	// at is when the state was taken (Storage's time, else the record's).
	at time.Time
	// since is when the explorer first saw it recorded.
	since time.Time
}

func newStateHistory() *stateHistory {
	return &stateHistory{seen: map[string]flinksim.Snapshot{}, disposed: map[string]time.Time{},
		known: map[string][]knownState{}, snapshotPaths: map[string]map[string]bool{},
		vanished: map[string]time.Time{}, restoreChecked: map[string]bool{}, tornDown: map[string]bool{}, promoted: map[string]bool{},
		normal: map[string]string{}}
}

var (
	emptyAuthority = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*):///+`)
	hasScheme      = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*):`)
)

// normalPath spells a state's path as the simulator's Storage keys it (flinksim's storageKey), so
// that "file:///a/b/", "/a/b/_metadata" and "file:/a/b" are one state.
func normalPath(p string) string {
	p = strings.TrimSpace(p)
	p = strings.TrimRight(p, "/")
	p = strings.TrimSuffix(p, "/_metadata")
	if p == "" {
		return ""
	}
	p = emptyAuthority.ReplaceAllString(p, "$1:/")
	if !hasScheme.MatchString(p) {
		p = "file:" + p
	}
	return strings.TrimRight(p, "/")
}

// record takes in what exists and what is recorded now.
func (x *explorer) record() {
	h := x.history
	now := x.w.clock.Now()
	if changes := x.w.storage.Changes(); !h.storageRead || changes != h.storageChanges {
		h.storageChanges, h.storageRead = changes, true
		exists := map[string]bool{}
		for _, s := range x.w.storage.Snapshots() {
			p, ok := h.normal[s.Path]
			if !ok {
				p = normalPath(s.Path)
				h.normal[s.Path] = p
			}
			exists[p] = true
			if _, ok := h.seen[p]; !ok {
				h.seen[p] = s
			}
			delete(h.vanished, p)
		}
		for p := range h.seen {
			if _, ok := h.vanished[p]; !ok && !exists[p] {
				h.vanished[p] = now
			}
		}
	}
	remember := func(jobID, path string, at *metav1.Time) {
		if jobID == "" || path == "" {
			return
		}
		p := normalPath(path)
		for _, k := range h.known[jobID] {
			if k.path == p {
				return
			}
		}
		t := time.Time{}
		if s, ok := h.seen[p]; ok {
			t = s.CreatedAt
		} else if at != nil {
			t = at.Time
		}
		if t.IsZero() {
			return
		}
		h.known[jobID] = append(h.known[jobID], knownState{path: p, at: t, since: now})
	}
	rememberOwner := func(st *v1beta1.JobOwnerStatus) {
		for _, e := range st.Ledger {
			if e.Result == v1beta1.StateCompleted && e.Purpose != v1beta1.SavepointRedeploy {
				remember(e.JobID, e.Path, e.Time)
			}
		}
		js := st.JobStatus
		remember(js.JobID, js.LastCheckpointPath, js.LastCheckpointTime)
		if st.FinalSavepointPath != "" {
			if n := len(h.finalSavepoints); n == 0 || h.finalSavepoints[n-1] != st.FinalSavepointPath {
				h.finalSavepoints = append(h.finalSavepoints, st.FinalSavepointPath)
			}
		}
	}
	ctx := context.Background()
	if apps, err := x.w.apps.FlinkV1beta1().FlinkApplications(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for i := range apps.Items {
			rememberOwner(&apps.Items[i].Status.JobOwnerStatus)
			if t := apps.Items[i].Status.LastTeardown; t != nil && t.JobID != "" {
				h.tornDown[t.JobID] = true
			}
			if s := apps.Items[i].Status.Deployments.Stable; s != nil && s.JobID != "" {
				h.promoted[s.JobID] = true
			}
		}
	}
	if sjs, err := x.w.apps.FlinkV1beta1().FlinkSessionJobs(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for i := range sjs.Items {
			rememberOwner(&sjs.Items[i].Status.JobOwnerStatus)
		}
	}
	for _, s := range x.w.snapshots() {
		for _, p := range []string{s.Status.Path, s.Spec.Path} {
			if p == "" {
				continue
			}
			if h.snapshotPaths[s.Name] == nil {
				h.snapshotPaths[s.Name] = map[string]bool{}
			}
			h.snapshotPaths[s.Name][normalPath(p)] = true
		}
	}
}

// savepoints are the savepoints that exist now, oldest first.
func (x *explorer) savepoints() []flinksim.Snapshot {
	var out []flinksim.Snapshot
	for _, s := range x.w.storage.Snapshots() {
		if s.Savepoint {
			out = append(out, s)
		}
	}
	return out
}
