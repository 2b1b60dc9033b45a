package kindpass

import (
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/loop"
	"github.com/flinkfsm/flinkfsm/pkg/printable"
)

// Steps are what a kind hands the pass besides its machine: how status an earlier operator wrote
// is migrated (nil for a kind of one shape), how its status is summarized, and, for a kind that
// holds its write back at times, its write (nil: Persist).
type Steps[C Kind] struct {
	Migrate   func(C)
	Summarize func(C)
	// Write writes the pass's status once; quiet says that the pass wrote nothing and said nothing
	// new (fsm.Kind.Write).
	Write func(C) (quiet bool, err error)
}

// PassOf is the one pass of a kind (fsm.Kind) over its machine, with the steps every kind runs
// around its handler.
func PassOf[C Kind](machine fsm.Machine[C], name string, s Steps[C]) *fsm.Kind[C] {
	write := s.Write
	if write == nil {
		write = func(rc C) (bool, error) {
			p := rc.Base()
			if err := Persist(p); err != nil {
				return false, err
			}
			p.Env.NoteDeadline(p)
			return false, nil
		}
	}
	return &fsm.Kind[C]{
		Machine: machine, Name: name,
		Before: func(rc C) {
			if s.Migrate != nil {
				s.Migrate(rc)
			}
			beforeStep(rc.Base())
		},
		After: func(rc C) {
			p := rc.Base()
			// What the FlinkSnapshots show follows what the handler recorded; the entries they now
			// name are persisted with it.
			syncSnapshots(p)
			answerSnapshotRequests(p)
			retainSnapshots(p)
			s.Summarize(rc)
			showRefusedServices(p)
			p.Showable()
		},
		Write: write,
		Tell: func(rc C, ev fsm.Event) {
			p := rc.Base()
			p.Env.Recorder.Event(p.Subject.Object(), EventType(ev.Warning), ev.Reason, printable.Text(ev.Message))
		},
		Logged: func(rc C, from, to fsm.Phase) {
			p := rc.Base()
			klog.FromContext(p).Info("phase transition", p.KindName, klog.KObj(p.Meta), "from", from,
				"to", to, "reason", p.Machine.Reason)
		},
	}
}

// Run runs the pass of one object (fsm.Kind.Run): migrate what older versions wrote, observe,
// decide, one status write, then the Events.
func Run[C Kind](rc C, k *fsm.Kind[C]) (time.Duration, error) {
	p := rc.Base()
	e := p.Env
	if from, to, ok := loop.QueueWait(p); ok {
		e.PhaseTime.Waits.Note(p.Key(), from, to)
	}
	return k.Run(rc, &e.PhaseTime, e.Metrics.phaseMetrics())
}

// beforeStep puts in place what the handler decides from.
func beforeStep(p *Pass) {
	p.MigrateLedger()
	// Before anything is asked of Flink: a JobManager is called only through its own Service.
	guardJobManagerServices(p)
	if p.Job != nil && (p.Meta.DeletionTimestamp == nil || p.Subject.Phase().Normalized() == fsm.PhaseDeleting) {
		p.Observe()
		p.SettleSavepoints()
	}
	if p.Job != nil && p.Machine.ObservedGeneration != p.Meta.Generation {
		// Once per spec generation, whatever the phase: settings the operator cannot follow are said
		// when they are applied, not each time they would be used.
		p.WarnOfUnusableSchedules()
		p.WarnOfUnavailableFormat()
	}
	// Before the handler, which may delete a cluster and with it what the pass saw of its pods.
	RemoveLeftHAConfigMaps(p)
}

// Persist writes the status if it changed, as a merge patch guarded by the resourceVersion we read:
// a write based on an out-of-date view fails instead of overwriting newer intent.
func Persist(p *Pass) error {
	patch, err := p.WritePatch()
	if err != nil || patch == nil {
		return err
	}
	if err := p.MayAct(); err != nil {
		return err
	}
	e, key := p.Env, p.Key()
	end := e.written.Begin(key)
	defer end() // after Wrote: no moment when the echo would look foreign
	updated, err := p.Patch(patch, "status")
	if apierrors.IsNotFound(err) {
		return nil // the finalizer went and the object with it
	}
	if err != nil {
		if !apierrors.IsConflict(err) {
			e.PhaseTime.Activity.WriteFailed(e.Clock.Now())
		}
		return fmt.Errorf("writing status of %s %s/%s: %w", p.KindName, p.Meta.Namespace, p.Meta.Name, err)
	}
	e.PhaseTime.Activity.Wrote(e.Clock.Now())
	e.written.Wrote(key, updated.GetResourceVersion())
	return nil
}
