package lifecycle

import (
	"errors"
	"fmt"
	"math/bits"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// Periodic snapshots: the savepoints and checkpoints the operator takes of the running job by
// itself, on spec.periodicSavepoint's and spec.periodicCheckpoint's schedules. Each is asked for,
// triggered and followed as an on-demand one is (SavepointOnDemand), so only in Running, never while
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
	schedule func(*jobstate.Settings) *v1beta1.PeriodicSchedule
}

// periodicKinds are in the order they are taken when both are due: the savepoint first.
var periodicKinds = []periodicKind{
	{purpose: v1beta1.SavepointPeriodic, field: "periodicSavepoint", what: "periodic savepoints",
		schedule: func(s *jobstate.Settings) *v1beta1.PeriodicSchedule { return s.PeriodicSavepoint }},
	{purpose: v1beta1.PeriodicCheckpoint, field: "periodicCheckpoint", what: "periodic checkpoints",
		schedule: func(s *jobstate.Settings) *v1beta1.PeriodicSchedule { return s.PeriodicCheckpoint }},
}

// periodicDue is the purpose of the periodic snapshot that is due now, or "".
func (p *Pass) periodicDue() v1beta1.SavepointPurpose {
	for _, k := range periodicKinds {
		if next, ok := p.nextPeriodic(k); ok && !next.After(p.Now) {
			return k.purpose
		}
	}
	return ""
}

// WakeForPeriodicSnapshots makes an outcome of the Running phase that stays for its usual poll come
// back sooner when a periodic snapshot falls due before that poll, so that a long
// statusPollInterval never makes one late. Nothing is written for it: the next pass works the due
// time out again from status.
func (p *Pass) WakeForPeriodicSnapshots(out fsm.Outcome) fsm.Outcome {
	poll := p.Kind.Poll(p.Subject.Phase().Normalized())
	if out.After != 0 || out.Next != "" || out.Err != nil || poll == nil {
		return out
	}
	wait := poll(p.Config)
	for _, k := range periodicKinds {
		// One already due that this pass did not take (its job is not alive, another snapshot is in
		// flight) waits for the usual poll rather than spinning.
		if next, ok := p.nextPeriodic(k); ok && next.After(p.Now) && next.Sub(p.Now) < wait {
			wait = next.Sub(p.Now)
			out.After = wait
		}
	}
	return out
}

// nextPeriodic is when the next periodic snapshot of a kind is due; false when none is scheduled:
// the spec sets no schedule or one that cannot be read, or no job has run stable yet.
func (p *Pass) nextPeriodic(k periodicKind) (time.Time, bool) {
	sch := k.schedule(p.Settings)
	if sch == nil {
		return time.Time{}, false
	}
	sched, err := parseSchedule(sch)
	if err != nil || sched == nil {
		return time.Time{}, false
	}
	since := lastPeriodic(p.Job, k.purpose)
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
	if s := jobstate.Stable(st); s != nil && s.StableTime != nil {
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
// the newer field, wins. A schedule whose times can come closer than the least interval
// (v1beta1.MinPeriodicIntervalSeconds) is an error, however it is written: the CRD refuses an
// interval below it and an @every it can read, and this the rest (an object stored before those
// rules, a form CEL does not read).
func parseSchedule(p *v1beta1.PeriodicSchedule) (cron.Schedule, error) {
	switch {
	case p.Schedule != "":
		sched, err := parseCron(p.Schedule)
		if err != nil {
			return nil, err
		}
		if step := leastStep(sched); step < minPeriodicInterval {
			return nil, &tooFrequent{fmt.Sprintf("its times can come %s apart", step)}
		}
		return sched, nil
	case p.IntervalSeconds > 0:
		if d := time.Duration(p.IntervalSeconds) * time.Second; d < minPeriodicInterval {
			return nil, &tooFrequent{fmt.Sprintf("%s apart", d)}
		}
		return interval(time.Duration(p.IntervalSeconds) * time.Second), nil
	}
	return nil, nil
}

// minPeriodicInterval is the least time between two periodic snapshots of a job.
const minPeriodicInterval = v1beta1.MinPeriodicIntervalSeconds * time.Second

// tooFrequent is a schedule refused for how close its times come.
type tooFrequent struct{ apart string }

func (e *tooFrequent) Error() string {
	return fmt.Sprintf("%s, closer than %ds, the least interval between periodic snapshots", e.apart, v1beta1.MinPeriodicIntervalSeconds)
}

// leastStep is the least time between two of a cron schedule's times. Five fields name whole
// minutes (second 0 of each); @every names its delay; a kind the parser may add later is not
// known, and counts as none.
func leastStep(sched cron.Schedule) time.Duration {
	switch s := sched.(type) {
	case cron.ConstantDelaySchedule:
		return s.Delay
	case *cron.SpecSchedule:
		if bits.OnesCount64(s.Second&^(1<<63)) == 1 {
			return time.Minute
		}
	}
	return 0
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

// WarnOfUnusableSchedules says, with a Warning Event, which schedule of the spec cannot be read,
// names no time to come, or comes round more often than the least interval: no periodic snapshot of
// its kind is taken, and the job runs on as before. The caller calls it once per spec generation.
func (p *Pass) WarnOfUnusableSchedules() {
	for _, k := range periodicKinds {
		sch := k.schedule(p.Settings)
		if sch == nil {
			continue
		}
		field, value := p.Settings.Field(k.field+".schedule"), fmt.Sprintf("%q", sch.Schedule)
		if sch.Schedule == "" {
			field, value = p.Settings.Field(k.field+".intervalSeconds"), fmt.Sprint(sch.IntervalSeconds)
		}
		sched, err := parseSchedule(sch)
		var frequent *tooFrequent
		switch {
		case errors.As(err, &frequent):
			p.Event(true, "InvalidSchedule", fmt.Sprintf("%s %s: %v; no %s are taken until it is changed", field, value, err, k.what))
		case err != nil:
			p.Event(true, "InvalidSchedule", fmt.Sprintf("%s %s is not a cron expression the operator reads (%v); no %s are taken until it is fixed",
				field, value, err, k.what))
		case sched != nil && sched.Next(p.Now.In(time.Local)).IsZero():
			p.Event(true, "InvalidSchedule", fmt.Sprintf("%s %s names no time within five years; no %s are taken until it is changed",
				field, value, k.what))
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
