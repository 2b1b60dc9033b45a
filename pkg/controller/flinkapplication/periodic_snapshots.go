package flinkapplication

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Periodic snapshots: the savepoints and checkpoints the operator takes of the running job by
// itself, on spec.periodicSavepoint's and spec.periodicCheckpoint's schedules. Each is asked for,
// triggered and followed as an on-demand one is (savepointOnDemand), so only in Running, never while
// an update, a suspend or a delete is under way.
//
// The next one of a kind is due at the schedule's first time after the later of the last one's
// trigger time and the time the job ran stable. Nothing but the ledger and the deployment record
// says when that was, so a restarted operator keeps the schedule and writes nothing more to status
// for it. A time that passed while the job did not run is not made up, since the job's stable time
// is after it; one that passed while the operator did not run is taken once when it is back, never
// as a burst, since the next is then scheduled from that trigger.

// periodicKind is one kind of periodic snapshot: its ledger purpose and where its schedule is.
type periodicKind struct {
	purpose v1beta1.SavepointPurpose
	// field is the schedule's name in the spec, for messages.
	field string
	// what names what it takes, for messages.
	what     string
	schedule func(*jobSettings) *v1beta1.PeriodicSchedule
}

// periodicKinds are in the order they are taken when both are due: the savepoint first.
var periodicKinds = []periodicKind{
	{purpose: v1beta1.SavepointPeriodic, field: "periodicSavepoint", what: "periodic savepoints",
		schedule: func(s *jobSettings) *v1beta1.PeriodicSchedule { return s.PeriodicSavepoint }},
	{purpose: v1beta1.PeriodicCheckpoint, field: "periodicCheckpoint", what: "periodic checkpoints",
		schedule: func(s *jobSettings) *v1beta1.PeriodicSchedule { return s.PeriodicCheckpoint }},
}

// periodicDue is the purpose of the periodic snapshot that is due now, or "".
func periodicDue(rc *Context) v1beta1.SavepointPurpose {
	for _, k := range periodicKinds {
		if next, ok := nextPeriodic(rc, k); ok && !next.After(rc.Now) {
			return k.purpose
		}
	}
	return ""
}

// wakeForPeriodicSnapshots makes an outcome of the Running phase that stays for its usual poll come
// back sooner when a periodic snapshot falls due before that poll, so that a long
// statusPollInterval never makes one late. Nothing is written for it: the next pass works the due
// time out again from status.
func wakeForPeriodicSnapshots(rc *Context, out Outcome) Outcome {
	spec, ok := rc.phases()[rc.subject.phase().Normalized()]
	if out.After != 0 || out.Next != "" || out.Err != nil || !ok || spec.poll == nil {
		return out
	}
	wait := spec.poll(rc.Config)
	for _, k := range periodicKinds {
		// One already due that this pass did not take (its job is not alive, another snapshot is in
		// flight) waits for the usual poll rather than spinning.
		if next, ok := nextPeriodic(rc, k); ok && next.After(rc.Now) && next.Sub(rc.Now) < wait {
			wait = next.Sub(rc.Now)
			out.After = wait
		}
	}
	return out
}

// nextPeriodic is when the next periodic snapshot of a kind is due; false when none is scheduled:
// the spec sets no schedule or one that cannot be read, or no job has run stable yet.
func nextPeriodic(rc *Context, k periodicKind) (time.Time, bool) {
	p := k.schedule(rc.Settings)
	if p == nil {
		return time.Time{}, false
	}
	sched, err := parseSchedule(p)
	if err != nil || sched == nil {
		return time.Time{}, false
	}
	since := lastPeriodic(rc.Job, k.purpose)
	if since.IsZero() {
		return time.Time{}, false
	}
	// Cron reads its fields in the location of the time it is given: the operator's (time.Local,
	// UTC unless its TZ is set), whatever location the status's times were decoded in.
	next := sched.Next(since.In(time.Local))
	return next, !next.IsZero()
}

// lastPeriodic is what the next periodic snapshot of the purpose is scheduled from: the later of the
// stable job's stable time and the newest trigger time of a snapshot of the purpose; zero before
// any job ran stable.
func lastPeriodic(st *v1beta1.JobOwnerStatus, purpose v1beta1.SavepointPurpose) time.Time {
	since := time.Time{}
	if s := stable(st); s != nil && s.StableTime != nil {
		since = s.StableTime.Time
	}
	if since.IsZero() {
		return since
	}
	for _, e := range st.Ledger {
		if e.Purpose == purpose && e.TriggerTime != nil && e.TriggerTime.After(since) {
			since = e.TriggerTime.Time
		}
	}
	return since
}

// parseSchedule reads a schedule: a cron expression (five fields, or a descriptor such as @hourly,
// @daily or @every 90m) when one is set, else the interval; nil when neither is. The API allows
// exactly one of the two; should both be set on an object stored past that rule, the expression,
// the newer field, wins.
func parseSchedule(p *v1beta1.PeriodicSchedule) (cron.Schedule, error) {
	switch {
	case p.Schedule != "":
		return parseCron(p.Schedule)
	case p.IntervalSeconds > 0:
		return interval(time.Duration(p.IntervalSeconds) * time.Second), nil
	}
	return nil, nil
}

// parseCron parses a cron expression. robfig/cron v3.0.1 panics on some malformed time zone
// prefixes ("TZ=0", robfig/cron#554) instead of answering an error, and a user's string must never
// stop a pass.
func parseCron(expr string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("malformed expression: %v", r)
		}
	}()
	return cron.ParseStandard(expr)
}

// interval is a schedule every so long after the last time, exactly: cron's own @every rounds to
// whole seconds and runs early by the last time's fraction of a second.
type interval time.Duration

func (d interval) Next(t time.Time) time.Time { return t.Add(time.Duration(d)) }

// warnOfUnusableSchedules says, with a Warning Event, which schedule of the spec cannot be read or
// names no time to come: no periodic snapshot of its kind is taken, and the job runs on as before.
// The caller calls it once per spec generation.
func warnOfUnusableSchedules(rc *Context) {
	for _, k := range periodicKinds {
		p := k.schedule(rc.Settings)
		if p == nil || p.Schedule == "" {
			continue
		}
		field := rc.Settings.field(k.field + ".schedule")
		sched, err := parseSchedule(p)
		switch {
		case err != nil:
			rc.event(true, "InvalidSchedule", fmt.Sprintf("%s %q is not a cron expression the operator reads (%v); no %s are taken until it is fixed",
				field, p.Schedule, err, k.what))
		case sched.Next(rc.Now.In(time.Local)).IsZero():
			rc.event(true, "InvalidSchedule", fmt.Sprintf("%s %q names no time within five years; no %s are taken until it is changed",
				field, p.Schedule, k.what))
		}
	}
}

// checkpointNoun names a checkpoint the operator triggered, by its purpose, for messages.
func checkpointNoun(p v1beta1.SavepointPurpose) string {
	if p == v1beta1.PeriodicCheckpoint {
		return "periodic checkpoint"
	}
	return "manual checkpoint"
}
