package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
)

// The group of applications with periodic savepoints in (c): the issue's "1,000 applications with
// periodic savepoints every 10 minutes must not raise the steady state's API writes above what the
// snapshots themselves need". Each savepoint writes its owner (the ledger) and makes a FlinkSnapshot;
// the group shows what each costs, and whether anything else is written.

// savepointing is the group and what measuring it needs beside a group's own figures.
type savepointing struct {
	group
	interval time.Duration
	// snapshots follows the group's FlinkSnapshots.
	snapshots *snapshotRecorder
}

// window is how long the group is measured: at least one interval, so that every application's
// next savepoint falls in it (each application's schedule runs from when its job ran stable, which
// is before the settle); the other groups are measured for the usual window within it.
func (s *savepointing) window(steady time.Duration) time.Duration {
	return max(steady, s.interval)
}

// savepointingApps creates k applications that take a savepoint every interval (keep, when
// positive, is their spec.savepointRetention.keep), starts following their FlinkSnapshots, and
// waits until they run.
func (b *bench) savepointingApps(ctx context.Context, k int, interval time.Duration, keep int32) (*savepointing, error) {
	ns, err := b.namespace(ctx, "bench-savepointing")
	if err != nil {
		return nil, err
	}
	s := &savepointing{interval: interval, snapshots: newSnapshotRecorder()}
	// Before the applications exist, so that every FlinkSnapshot is seen created.
	if err := s.snapshots.run(ctx, b.apps, ns); err != nil {
		return nil, fmt.Errorf("watching FlinkSnapshots: %w", err)
	}
	began := time.Now()
	err = parallel(ctx, k, func(ctx context.Context, i int) error {
		app := benchApp(ns, appName(i), 3, "")
		app.Spec.PeriodicSavepoint = &v1beta1.PeriodicSchedule{IntervalSeconds: int32(interval / time.Second)}
		if keep > 0 {
			app.Spec.SavepointRetention = &v1beta1.SavepointRetention{Keep: keep}
		}
		_, err := b.apps.FlinkV1beta1().FlinkApplications(ns).Create(ctx, app, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return nil, err
	}
	for i := range k {
		s.keys = append(s.keys, ns+"/"+appName(i))
	}
	wctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	err = waitFor(wctx, "the savepointing applications Running", func() bool {
		for _, key := range s.keys {
			if _, ok := b.rec.runningSince(key, began, ""); !ok {
				return false
			}
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, b.phaseCounts(s.keys))
	}
	return s, nil
}

// savepointFigures are what the group's periodic savepoints cost in the window.
type savepointFigures struct {
	IntervalSeconds float64 `json:"intervalSeconds"`
	WindowSeconds   float64 `json:"windowSeconds"`
	Apps            int     `json:"apps"`
	// Savepoints counts the ledger entries that ended in the window; Failed, those that failed.
	// Asked counts those asked for. SnapshotsCompleted counts the FlinkSnapshots seen Completed.
	Savepoints         int `json:"savepoints"`
	Failed             int `json:"savepointsFailed"`
	Asked              int `json:"savepointsAsked"`
	SnapshotsCompleted int `json:"snapshotsCompleted"`
	// OwnerWrites counts the owners' new resourceVersions; OwnerWritesByStage, by what they did to
	// the ledger's savepoints ("" for none: a write savepoints do not explain).
	OwnerWrites              int            `json:"ownerWrites"`
	OwnerWritesForSavepoints int            `json:"ownerWritesForSavepoints"`
	OwnerWritesByStage       map[string]int `json:"ownerWritesByStage"`
	// SnapshotWrites counts the FlinkSnapshots' creates and changes by kind (snapshotWrite), and
	// "delete" for an object gone.
	SnapshotWrites map[string]int `json:"snapshotWrites"`
	// SnapshotRequests are the API server's requests to FlinkSnapshots in the window, by verb: a
	// request that changed nothing costs a request and no new resourceVersion, so it shows here and
	// not in SnapshotWrites. Everyone's, but only this group has FlinkSnapshots.
	SnapshotRequests map[string]float64 `json:"snapshotRequests"`
	Cost             savepointCost      `json:"cost"`
}

// savepointFigures counts the group's writes in [from, to); requests are the API server's request
// counts at from and at to.
func (b *bench) savepointFigures(s *savepointing, from, to time.Time, requestsBefore, requestsAfter map[string]float64) *savepointFigures {
	w := b.rec.savepointWritesBetween(s.keys, from, to)
	snaps, completed := s.snapshots.between(from, to)
	f := &savepointFigures{
		IntervalSeconds: s.interval.Seconds(), WindowSeconds: to.Sub(from).Seconds(), Apps: len(s.keys),
		Savepoints: w.ended, Failed: w.failed, Asked: w.asked, SnapshotsCompleted: completed,
		OwnerWrites: w.all, OwnerWritesForSavepoints: w.forSavepoints, OwnerWritesByStage: w.byStage,
		SnapshotWrites: snaps, SnapshotRequests: map[string]float64{},
	}
	for k, v := range requestsAfter {
		if d := v - requestsBefore[k]; d > 0 && strings.Contains(k, " flinksnapshots") {
			f.SnapshotRequests[k] = d
		}
	}
	f.Cost = savepointCounts{Apps: f.Apps, Window: to.Sub(from), OwnerWrites: f.OwnerWrites,
		OwnerWritesForSavepoints: f.OwnerWritesForSavepoints, Savepoints: f.Savepoints, SnapshotWrites: snaps,
		SnapshotRequests: f.SnapshotRequests}.cost()
	return f
}

// snapshotRecorder follows the FlinkSnapshots of one namespace through one watch, stamping each
// change with the time it arrived, as recorder does for applications.
type snapshotRecorder struct {
	mu      sync.Mutex
	last    map[string]*v1beta1.FlinkSnapshot
	changes []snapshotChange
}

// snapshotChange is one new resourceVersion of a FlinkSnapshot, or its deletion.
type snapshotChange struct {
	at time.Time
	// kind is snapshotWrite's, or "delete".
	kind string
	// completed is set on the change that first showed the snapshot Completed.
	completed bool
}

func newSnapshotRecorder() *snapshotRecorder {
	return &snapshotRecorder{last: map[string]*v1beta1.FlinkSnapshot{}}
}

// run lists and then watches the namespace's FlinkSnapshots until ctx ends. Objects already there
// are not counted as created.
func (r *snapshotRecorder) run(ctx context.Context, apps versioned.Interface, ns string) error {
	client := apps.FlinkV1beta1().FlinkSnapshots(ns)
	first := true
	return follow(ctx, func(ctx context.Context) (string, error) {
		list, err := client.List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", err
		}
		if first {
			first = false
			r.mu.Lock()
			for i := range list.Items {
				r.last[list.Items[i].Name] = &list.Items[i]
			}
			r.mu.Unlock()
			return list.ResourceVersion, nil
		}
		// A list after an expired watch: what changed meanwhile counts as it would have.
		now := time.Now()
		for i := range list.Items {
			r.observe(watch.Modified, &list.Items[i], now)
		}
		return list.ResourceVersion, nil
	}, client.Watch, func(kind watch.EventType, snap *v1beta1.FlinkSnapshot) { r.observe(kind, snap, time.Now()) })
}

func (r *snapshotRecorder) observe(kind watch.EventType, s *v1beta1.FlinkSnapshot, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	before := r.last[s.Name]
	if kind == watch.Deleted {
		delete(r.last, s.Name)
		r.changes = append(r.changes, snapshotChange{at: at, kind: "delete"})
		return
	}
	if before != nil && before.ResourceVersion == s.ResourceVersion {
		return
	}
	wasCompleted := before != nil && before.Status.State == v1beta1.StateCompleted
	r.changes = append(r.changes, snapshotChange{at: at, kind: snapshotWrite(before, s),
		completed: !wasCompleted && s.Status.State == v1beta1.StateCompleted})
	r.last[s.Name] = s
}

// between counts the changes seen in [from, to) by kind, and the snapshots that became Completed.
func (r *snapshotRecorder) between(from, to time.Time) (map[string]int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	kinds, completed := map[string]int{}, 0
	for _, c := range r.changes {
		if c.at.Before(from) || !c.at.Before(to) {
			continue
		}
		kinds[c.kind]++
		if c.completed {
			completed++
		}
	}
	return kinds, completed
}

// evaluateSavepoints is the target for periodic savepoints: per savepoint, at most two owner
// writes (asked, ended) and two FlinkSnapshot writes (create, status), and no other write.
func (r *results) evaluateSavepoints(p *savepointFigures, g *groupFigures, fleet groupFigures) {
	c := p.Cost
	interval := time.Duration(p.IntervalSeconds * float64(time.Second))
	window := time.Duration(p.WindowSeconds * float64(time.Second)).Round(time.Second)
	// Each application's schedule runs from when its job ran stable, before the window began, so a
	// window of k intervals holds at least k savepoints of each.
	want := p.Apps * int(window/interval)
	r.target(fmt.Sprintf("(c) %d apps with a savepoint every %s: savepoints in %s", p.Apps, interval, window),
		fmt.Sprintf("%d (%.1f per app per hour; %d failed, %d FlinkSnapshots Completed)", p.Savepoints, c.SavepointsPerAppHour, p.Failed, p.SnapshotsCompleted),
		fmt.Sprintf("≥ %d, none failed", want), p.Savepoints >= want && p.Failed == 0)
	r.add("(c)   owner / FlinkSnapshot writes per app per hour", fmt.Sprintf("%.1f / %.1f", c.OwnerWritesPerAppHour, c.SnapshotWritesPerAppHour), "—")
	r.target("(c)   owner writes per savepoint", fmt.Sprintf("%.2f (%d writes)", c.OwnerWritesPerSavepoint, p.OwnerWritesForSavepoints),
		"≤ 2", p.Savepoints > 0 && c.OwnerWritesPerSavepoint <= 2)
	r.target("(c)   FlinkSnapshot writes per savepoint", fmt.Sprintf("%.2f", c.SnapshotWritesPerSavepoint),
		"≤ 2 (create, status)", p.Savepoints > 0 && c.SnapshotWritesPerSavepoint <= 2)
	r.target("(c)   FlinkSnapshot writes but creates, status, deletes", fmt.Sprint(c.SnapshotWritesBeyondNeeded), "0", c.SnapshotWritesBeyondNeeded == 0)
	// A write request that changes nothing is no write of etcd, but the API server does all the rest
	// of a write's work for it: the "API writes" counts it.
	r.target("(c)   FlinkSnapshot write requests per savepoint", fmt.Sprintf("%.2f (%d of %d changed nothing)",
		c.SnapshotWriteRequestsPerSavepoint, c.SnapshotRequestsForNothing, c.SnapshotWriteRequests),
		"≤ 2", p.Savepoints > 0 && c.SnapshotWriteRequestsPerSavepoint <= 2)
	r.target("(c)   owner writes for no savepoint, per app per hour", fmt.Sprintf("%.1f (%d writes)", c.OwnerWritesNotForSavepointsPerAppHour, p.OwnerWrites-p.OwnerWritesForSavepoints),
		fmt.Sprintf("≤ %.1f, the fleet's", fleet.StatusWritesPerAppHour), c.OwnerWritesNotForSavepointsPerAppHour <= fleet.StatusWritesPerAppHour)
	r.add("(c)   FlinkSnapshots retired (deleted) per app per hour", fmt.Sprintf("%.1f", c.SnapshotDeletesPerAppHour), "—")
	if g != nil {
		r.add("(c)   their Flink REST calls per app per minute", fmt.Sprintf("%.2f", g.RESTCallsPerAppMinute), "—")
		r.target("(c)   of them not Running at the end", fmt.Sprint(g.NotRunningAtEnd), "0", g.NotRunningAtEnd == 0)
	}
}

// print says where the savepointing applications' writes went.
func (p *savepointFigures) print(w io.Writer) {
	fmt.Fprintf(w, "(c) the savepointing apps: owner writes by what they did to the ledger's savepoints: %s\n", describeCounts(p.OwnerWritesByStage))
	fmt.Fprintf(w, "(c) the savepointing apps: FlinkSnapshot writes by kind: %s\n", describeCounts(p.SnapshotWrites))
	fmt.Fprintf(w, "(c) the savepointing apps: API server requests to FlinkSnapshots (a request that changed nothing too): %s\n",
		formatRequests(p.SnapshotRequests))
}
