package main

import (
	"context"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/controller/checkpointbook"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

// A takeover's checkpoint reads. A job that checkpoints has its newest checkpoint recorded every
// record window, so that a job lost with its JobManager without HA restarts from a checkpoint
// that still exists (docs/job-lifecycle.md, "Checkpoints in status"). An operator outage stops the
// records; a new process whose first pass finds the recorded checkpoint older than the window
// reads the checkpoints at once, because Flink may delete the recorded one before the next poll.
// That read is one the outage earned, as a deadline can be: (f) judges the issue's "at most one
// Flink call per application" on the calls beyond it, and counts apart the reads it made of jobs
// whose record was not due (none should be).

// checkpointsEndpoint is how the simulator counts a read of a job's checkpoints.
const checkpointsEndpoint = "GET /jobs/:id/checkpoints"

// checkpointReads are the applications' reads of their jobs' checkpoints so far, by "<ns>/<app>".
func (b *bench) checkpointReads(keys []string) map[string]int64 {
	return checkpointReadsOf(b.env.Fleet, keys)
}

// checkpointReadsOf is checkpointReads read from counts.
func checkpointReadsOf(counts requestCounts, keys []string) map[string]int64 {
	out := make(map[string]int64, len(keys))
	for _, k := range keys {
		out[k] = 0
	}
	for _, ns := range namespaces(keys) {
		for service, endpoints := range counts.RequestsByService(ns) {
			key := ns + "/" + appOfService(service)
			if _, ours := out[key]; ours {
				out[key] += endpoints[checkpointsEndpoint]
			}
		}
	}
	return out
}

// recordedCheckpoints is, for each application of keys whose job has a checkpoint recorded, when
// Flink triggered it: status's record or the checkpoint book's, whichever is newer, as a new
// operator process reads them. Read with the operator down, it is what the new one finds.
func (b *bench) recordedCheckpoints(ctx context.Context, keys []string) (map[string]time.Time, error) {
	pages := map[string]*corev1.ConfigMap{}
	for _, ns := range namespaces(keys) {
		list, err := b.kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: checkpointbook.Label})
		if err != nil {
			return nil, err
		}
		for i := range list.Items {
			pages[ns+"/"+list.Items[i].Name] = &list.Items[i]
		}
	}
	out := map[string]time.Time{}
	for _, k := range keys {
		app := b.rec.latest(k)
		if app == nil {
			continue
		}
		js := app.Status.JobStatus
		var at time.Time
		if js.LastCheckpointPath != "" && js.LastCheckpointTime != nil {
			at = js.LastCheckpointTime.Time
		}
		// The book keys a job by its owner's kind, as the operator names it; the bench's are all
		// FlinkApplications.
		key := checkpointbook.Key{Namespace: app.Namespace, Kind: "FlinkApplication", Name: app.Name}
		page := pages[app.Namespace+"/"+checkpointbook.PageName(key)]
		if e, ok := checkpointbook.Read(page, key); ok && e.JobID == js.JobID && e.At.After(at) {
			at = e.At
		}
		if !at.IsZero() {
			out[k] = at
		}
	}
	return out, nil
}

// recordAges are the applications' recorded checkpoints' ages at a moment: the median and the
// oldest, in seconds.
func recordAges(recorded map[string]time.Time, at time.Time) (median, oldest float64) {
	if len(recorded) == 0 {
		return 0, 0
	}
	ages := make([]float64, 0, len(recorded))
	for _, t := range recorded {
		ages = append(ages, at.Sub(t).Seconds())
	}
	sort.Float64s(ages)
	return ages[len(ages)/2], ages[len(ages)-1]
}

// earnedReads judges each application's checkpoint reads in the window: a read is earned when the
// application's recorded checkpoint was at least window old at its first pass (firstPass, when
// the new process first called its JobManager). slack absorbs the bench's 20 ms sampling of the
// calls. It returns, per application, the calls beyond an earned read, and how many applications
// were due and how many read their checkpoints without being due.
func earnedReads(calls, reads map[string]int64, recorded, firstPass map[string]time.Time, window, slack time.Duration) (beyond map[string]int64, due, unearned int) {
	beyond = make(map[string]int64, len(calls))
	for k, n := range calls {
		t, haveRecord := recorded[k]
		first, observed := firstPass[k]
		// A job with no checkpoint recorded yet has them read at every pass until one is.
		isDue := window > 0 && observed && (!haveRecord || first.Sub(t) >= window-slack) || window == 0 && reads[k] > 0
		if isDue {
			due++
		}
		switch {
		case reads[k] > 0 && isDue:
			n--
		case reads[k] > 0:
			unearned++
		}
		beyond[k] = n
	}
	return beyond, due, unearned
}

// records is a checkpointing group's figures of (f): calls and reads are counted at the kill
// (…Base) and at the end of the window.
func records(keys []string, callsBase, calls, readsBase, reads map[string]int64, recorded, firstPass map[string]time.Time,
	killed time.Time, w recordWindow) *takeoverRecords {
	inWindow, readsIn, mine := map[string]int64{}, map[string]int64{}, map[string]time.Time{}
	for _, k := range keys {
		inWindow[k], readsIn[k] = calls[k]-callsBase[k], reads[k]-readsBase[k]
		if t, ok := recorded[k]; ok {
			mine[k] = t
		}
	}
	r := &takeoverRecords{WindowSeconds: w.window.Seconds(), BoundSeconds: w.bound.Seconds(), IntervalSeconds: w.interval.Seconds()}
	r.AgeAtKillMedianSeconds, r.AgeAtKillOldestSeconds = recordAges(mine, killed)
	beyond, due, notDue := earnedReads(inWindow, readsIn, mine, firstPass, w.window, 100*time.Millisecond)
	r.Due, r.NotDueReads = due, notDue
	for _, n := range beyond {
		r.CallsBeyondEarned += n
		r.MaxCallsBeyondEarned = max(r.MaxCallsBeyondEarned, n)
	}
	return r
}

// benchCheckpointInterval is the checkpoint interval of the bench's checkpointing applications.
const benchCheckpointInterval = 10 * time.Second

// recordWindowOf is the record window and restore bound of the bench's checkpointing jobs as the
// operator with this configuration works them out (docs/job-lifecycle.md, "Checkpoints in
// status"): with retained 0 the operator's cluster keeps enough for checkpointRecordInterval;
// with a count set, the window is what that count lets a record survive, and a window of 0 (one
// retained) records every checkpoint in status at every poll.
func recordWindowOf(operatorConfig map[string]string, retained int) recordWindow {
	d := config.Default()
	setting := func(name string, def time.Duration) time.Duration {
		if v, err := time.ParseDuration(operatorConfig[name]); err == nil {
			return v
		}
		return def
	}
	window := setting("checkpointRecordInterval", d.CheckpointRecordInterval.Duration)
	poll := setting("statusPollInterval", d.StatusPollInterval.Duration)
	book := setting("checkpointBookInterval", d.CheckpointBookInterval.Duration)
	interval := benchCheckpointInterval
	if retained > 0 {
		survives := time.Duration(retained-1) * interval
		window = max(0, min(window, survives-interval-poll-book))
	}
	if window == 0 {
		book = 0
	}
	return recordWindow{window: window, bound: window + poll + book + interval, interval: interval}
}
