package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"
)

// takeoverResult is (f), issue 29's quiet takeover: with the applications of (c) Running and steady,
// the operator is killed (SIGKILL, as a node failure or an OOM kill would) and, after the outage, a
// new process started, as its Deployment or a standby replica would. What the new process costs in
// its first statusPollInterval: the Flink calls, the status writes, everyone's API requests; and
// how long until it had observed every application again. An application counts as observed at the
// new process's first Flink call to its JobManager, which each pass of a Running application makes.
type takeoverResult struct {
	OutageSeconds float64 `json:"outageSeconds"`
	PollSeconds   float64 `json:"statusPollIntervalSeconds"`
	// FirstCallSeconds is from the new process's start to its first Flink call: its start-up and
	// the initial lists of its caches.
	FirstCallSeconds float64 `json:"firstCallSeconds"`
	// AllObservedSeconds is from the new process's start until every application had been observed;
	// SpreadSeconds, from the first application observed to the last.
	AllObservedSeconds float64 `json:"allObservedSeconds"`
	SpreadSeconds      float64 `json:"spreadSeconds"`
	// ObservedBySecond counts the applications first observed in each second after the first call.
	ObservedBySecond []int `json:"observedBySecond"`
	// WindowSeconds is what the per-group figures count: from the kill to a statusPollInterval
	// after the first call.
	WindowSeconds float64         `json:"windowSeconds"`
	Groups        []takeoverGroup `json:"groups"`
	// APIRequests counts everyone's requests to the API server in the window, by verb and resource.
	APIRequests map[string]float64 `json:"apiRequestsInWindow"`
}

type takeoverGroup struct {
	Name string `json:"name"`
	Apps int    `json:"apps"`
	// StatusWrites counts the new resourceVersions of the group's applications in the window;
	// WrittenFields, the status fields they changed.
	StatusWrites  int            `json:"statusWrites"`
	WrittenFields map[string]int `json:"writtenFields"`
	// RESTCalls are the group's Flink calls in the window; MaxRESTCallsPerApp, the busiest
	// application's; AppsWithMoreThanOne, how many made more than one.
	RESTCalls           int64            `json:"restCalls"`
	MaxRESTCallsPerApp  int64            `json:"maxRestCallsPerApp"`
	AppsWithMoreThanOne int              `json:"appsWithMoreThanOneCall"`
	RESTCallsByEndpoint map[string]int64 `json:"restCallsByEndpoint"`
	// NotObserved counts applications the new process had not called when the wait ended.
	NotObserved int `json:"notObserved"`
	// Records is, for a group that checkpoints, its checkpoint records across the takeover.
	Records *takeoverRecords `json:"records,omitempty"`
}

// takeoverRecords are a checkpointing group's records across the takeover (takeover_records.go).
type takeoverRecords struct {
	// WindowSeconds is the record window of the group's jobs, and BoundSeconds the restore bound
	// the operator states for them: how much older than the newest completed checkpoint the
	// recorded one may be.
	WindowSeconds float64 `json:"recordWindowSeconds"`
	BoundSeconds  float64 `json:"restoreBoundSeconds"`
	// AgeAtKill is how old the recorded checkpoints were when the operator was killed (median,
	// oldest): the newest completed was at most a checkpoint interval younger.
	AgeAtKillMedianSeconds float64 `json:"ageAtKillMedianSeconds"`
	AgeAtKillOldestSeconds float64 `json:"ageAtKillOldestSeconds"`
	// Due counts the applications whose recorded checkpoint was at least the window old at their
	// first pass, which earns them a read of their checkpoints; NotDueReads, those that read them
	// without it.
	Due         int `json:"appsDue"`
	NotDueReads int `json:"readsNotDue"`
	// CallsBeyondEarned are the group's calls less the earned reads; MaxCallsBeyondEarned, the
	// busiest application's.
	CallsBeyondEarned    int64   `json:"restCallsBeyondEarnedReads"`
	MaxCallsBeyondEarned int64   `json:"maxRestCallsBeyondEarnedReads"`
	IntervalSeconds      float64 `json:"checkpointIntervalSeconds"`
}

// recordWindow is a checkpointing group's record window, restore bound and checkpoint interval.
type recordWindow struct {
	window, bound, interval time.Duration
}

// takeover runs (f) on the groups, which are Running and steady.
// windows has the record window of each group that checkpoints.
func (b *bench) takeover(ctx context.Context, outage, poll time.Duration, groups map[string]group, windows map[string]recordWindow) (*takeoverResult, error) {
	names := make([]string, 0, len(groups))
	var keys []string
	for name, g := range groups {
		names = append(names, name)
		keys = append(keys, g.keys...)
	}
	sort.Strings(names)
	b.logf("(f) killing the operator with %d applications Running; a new one starts after %s", len(keys), outage)
	b.env.KillOperator()
	killed := time.Now()
	// Nothing calls Flink now: every later call is the new process's.
	base := b.callsByApp(keys)
	readsBase := b.checkpointReads(keys)
	var checkpointing []string
	for name, g := range groups {
		if _, ok := windows[name]; ok {
			checkpointing = append(checkpointing, g.keys...)
		}
	}
	recorded, err := b.recordedCheckpoints(ctx, checkpointing)
	if err != nil {
		return nil, err
	}
	endpoints := map[string]map[string]int64{}
	for _, name := range names {
		endpoints[name] = b.snapshot(groups[name]).endpoints
	}
	apiBefore, err := b.apiRequests(ctx)
	if err != nil {
		return nil, err
	}
	if err := sleep(ctx, outage); err != nil {
		return nil, err
	}
	// The window runs from the first call as the simulator served it, not as a poll below saw it,
	// and its counts are the simulator's as they stood at its end: an application observed at its
	// start is polled again a statusPollInterval later, just after the end, before a poll below
	// would read the counters.
	b.env.Fleet.MarkWindow(poll)
	if err := b.env.StartOperator(); err != nil {
		return nil, err
	}
	started := time.Now()
	addr, err := b.env.MetricsAddress(ctx)
	if err != nil {
		return nil, err
	}
	b.setMetricsAddress(addr)

	observed := map[string]time.Time{}
	var first, windowEnd time.Time
	var inWindow, readsInWindow map[string]int64
	inWindowEndpoints := map[string]map[string]int64{}
	var apiAfter map[string]float64
	deadline := started.Add(b.timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		now := time.Now()
		calls := b.callsByApp(keys)
		for _, k := range keys {
			if _, seen := observed[k]; !seen && calls[k] > base[k] {
				observed[k] = now
				if first.IsZero() {
					first = now
					if served, ok := b.env.Fleet.FirstRequest(); ok && served.Before(now) {
						first = served
					}
					windowEnd = first.Add(poll)
				}
			}
		}
		// The simulator closes the window on its own clock (MarkWindow), at the same end.
		if counts, ended := b.env.Fleet.WindowCounts(); inWindow == nil && ended {
			inWindow, readsInWindow = callsByAppOf(counts, keys), checkpointReadsOf(counts, keys)
			for _, name := range names {
				inWindowEndpoints[name] = b.snapshotOf(counts, groups[name]).endpoints
			}
			if apiAfter, err = b.apiRequests(ctx); err != nil {
				return nil, err
			}
		}
		if inWindow != nil && len(observed) == len(keys) || now.After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
	if first.IsZero() {
		return nil, fmt.Errorf("(f): the new operator made no Flink call within %s", b.timeout)
	}
	if inWindow == nil {
		return nil, fmt.Errorf("(f): the new operator's first statusPollInterval did not end within %s", b.timeout)
	}
	res := &takeoverResult{OutageSeconds: started.Sub(killed).Seconds(), PollSeconds: poll.Seconds(),
		FirstCallSeconds: first.Sub(started).Seconds(), WindowSeconds: windowEnd.Sub(killed).Seconds(),
		APIRequests: requestsPerApp(apiBefore, apiAfter, 1)}
	last := first
	for _, at := range observed {
		if at.After(last) {
			last = at
		}
		s := int(at.Sub(first).Seconds())
		for len(res.ObservedBySecond) <= s {
			res.ObservedBySecond = append(res.ObservedBySecond, 0)
		}
		res.ObservedBySecond[s]++
	}
	res.AllObservedSeconds, res.SpreadSeconds = last.Sub(started).Seconds(), last.Sub(first).Seconds()
	for _, name := range names {
		g := groups[name]
		tg := takeoverGroup{Name: name, Apps: len(g.keys), RESTCallsByEndpoint: map[string]int64{}}
		tg.StatusWrites, tg.WrittenFields = b.rec.writesBetween(g.keys, killed, windowEnd)
		for _, k := range g.keys {
			d := inWindow[k] - base[k]
			tg.RESTCalls += d
			tg.MaxRESTCallsPerApp = max(tg.MaxRESTCallsPerApp, d)
			if d > 1 {
				tg.AppsWithMoreThanOne++
			}
			if _, seen := observed[k]; !seen {
				tg.NotObserved++
			}
		}
		if w, ok := windows[name]; ok {
			tg.Records = records(g.keys, base, inWindow, readsBase, readsInWindow, recorded, observed, killed, w)
		}
		for ep, c := range inWindowEndpoints[name] {
			if d := c - endpoints[name][ep]; d > 0 {
				tg.RESTCallsByEndpoint[ep] = d
			}
		}
		res.Groups = append(res.Groups, tg)
	}
	b.logf("(f) first Flink call %.2f s after the start, every application observed by %.2f s (spread %.2f s)",
		res.FirstCallSeconds, res.AllObservedSeconds, res.SpreadSeconds)
	for _, g := range res.Groups {
		b.logf("(f)   %s: %d status writes, %d Flink calls (busiest app %d) in the first statusPollInterval",
			g.Name, g.StatusWrites, g.RESTCalls, g.MaxRESTCallsPerApp)
	}
	return res, nil
}

// evaluateTakeover is (f): the quiet takeover, a target for what it says.
func (r *results) evaluateTakeover(t *takeoverResult) {
	r.add("(f) takeover: outage, then new process → first Flink call", secs(t.OutageSeconds)+", "+secs(t.FirstCallSeconds), "—")
	r.target("(f)   every app observed again, after the first call", secs(t.SpreadSeconds),
		fmt.Sprintf("≤ statusPollInterval (%.0f s)", t.PollSeconds), t.SpreadSeconds <= t.PollSeconds)
	// The targets hold for every application, the checkpointing ones too: a new leader
	// writes no status and sends at most one Flink call per application in its first
	// statusPollInterval. (Until 2026-11-27 only the group that does not checkpoint was judged,
	// and the checkpointing half's second call, its checkpoints read when the outage made a record
	// due, went into the report as a figure.)
	for _, g := range t.Groups {
		r.target(fmt.Sprintf("(f)   %s: status writes in the first statusPollInterval", g.Name), fmt.Sprint(g.StatusWrites), "0", g.StatusWrites == 0)
		calls := fmt.Sprintf("%.2f (busiest app %d)", float64(g.RESTCalls)/float64(g.Apps), g.MaxRESTCallsPerApp)
		if g.Records == nil {
			r.target(fmt.Sprintf("(f)   %s: Flink calls per app in the first statusPollInterval", g.Name), calls, "≤ 1", g.MaxRESTCallsPerApp <= 1)
			continue
		}
		// Since 2026-11-28 a checkpoint read that the outage made due is judged as the outage's,
		// as a deadline is (takeover_records.go); the calls in all are reported beside.
		rec := g.Records
		r.add(fmt.Sprintf("(f)   %s: Flink calls per app in the first statusPollInterval, in all", g.Name), calls, "—")
		r.target(fmt.Sprintf("(f)   %s: the recorded checkpoint's age at the kill, median / oldest", g.Name),
			fmt.Sprintf("%.1f / %.1f s", rec.AgeAtKillMedianSeconds, rec.AgeAtKillOldestSeconds),
			fmt.Sprintf("≤ the restore bound and an interval (%.0f s)", rec.BoundSeconds+rec.IntervalSeconds),
			rec.AgeAtKillOldestSeconds <= rec.BoundSeconds+rec.IntervalSeconds)
		r.target(fmt.Sprintf("(f)   %s: Flink calls per app beyond the checkpoint read the outage made due", g.Name),
			fmt.Sprintf("%.2f (busiest app %d; %d of %d apps due; %d reads not due)", float64(rec.CallsBeyondEarned)/float64(g.Apps),
				rec.MaxCallsBeyondEarned, rec.Due, g.Apps, rec.NotDueReads),
			"≤ 1, and no read not due", rec.MaxCallsBeyondEarned <= 1 && rec.NotDueReads == 0)
	}
}

func (t *takeoverResult) print(w io.Writer) {
	fmt.Fprintf(w, "\n(f) takeover: applications first observed in each second after the new process's first Flink call: %v\n", t.ObservedBySecond)
	for _, g := range t.Groups {
		fmt.Fprintf(w, "(f) %s: Flink calls by endpoint %v; status fields written %v; %d apps with more than one call\n",
			g.Name, g.RESTCallsByEndpoint, g.WrittenFields, g.AppsWithMoreThanOne)
	}
	fmt.Fprintf(w, "(f) API server requests in the window, everyone's: %s\n", formatRequests(t.APIRequests))
}
