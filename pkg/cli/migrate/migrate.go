// Package migrate moves a job run by the Apache Flink Kubernetes operator (an application-mode
// FlinkDeployment or a FlinkSessionJob of flink.apache.org) to flinkfsm with its state: it asks
// the Apache operator to stop the job with a savepoint, proves from what that operator records
// that the savepoint is the job's newest state, and creates the converted flinkfsm object starting
// from exactly that savepoint. The Apache object is left suspended, never deleted.
//
// Two copies of a job writing to one sink must never happen, so the flinkfsm object is created only
// once the Apache job is proven stopped. Each step is recorded on the Apache object before it acts,
// so a run after an interruption continues where the last one stopped.
package migrate

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
	"github.com/flinkfsm/flinkfsm/pkg/printable"
)

// Migrator is what a migration works with.
type Migrator struct {
	// Apache reads and patches the Apache operator's objects, and reads what they leave behind
	// under the names the flinkfsm object takes (a stopped JobManager's Service, a UI Ingress).
	Apache dynamic.Interface
	// Flinkfsm creates the converted object.
	Flinkfsm versioned.Interface
	// Convert converts a YAML stream of Apache objects to flinkfsm's, with warnings for what it
	// could not carry across.
	Convert func(manifest []byte) (out []byte, warnings []string, err error)
	Clock   Clock
	// Out receives a line for every step.
	Out io.Writer
	// Poll is how often the Apache object is read while its operator stops the job.
	Poll time.Duration
}

// Clock is the time a migration waits by.
type Clock interface {
	Now() time.Time
	// Sleep waits d, or until ctx ends (then it returns ctx's error).
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock is the machine's clock.
type SystemClock struct{}

// Now is time.Now.
func (SystemClock) Now() time.Time { return time.Now() }

// Sleep waits d or until ctx ends.
func (SystemClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Request is one migration asked for.
type Request struct {
	Kind            Kind
	Namespace, Name string
	// Timeout bounds the wait for the Apache operator to stop the job and record its savepoint.
	Timeout time.Duration
	// DryRun prints the plan and changes nothing.
	DryRun bool
	// AllowStateless moves a job whose upgradeMode is stateless without its state: the user
	// accepts that the new job starts empty.
	AllowStateless bool
}

// Reason says why a migration ended without finishing, and so what running it again does.
type Reason int

const (
	// Refused: something is not as a migration needs it; nothing more was changed.
	Refused Reason = iota
	// Failed: the Apache operator stopped the job, or tried to, but its savepoint failed or cannot
	// be proven the newest state.
	Failed
	// TimedOut: the Apache operator did not finish within the timeout; running again continues.
	TimedOut
)

// Error is a migration that ended without finishing.
type Error struct {
	Reason  Reason
	Message string
}

func (e *Error) Error() string { return e.Message }

func refuse(format string, args ...interface{}) error {
	return &Error{Reason: Refused, Message: fmt.Sprintf(format, args...)}
}

// migration is one run: the request, and what it has printed.
type migration struct {
	*Migrator
	req    Request
	warned bool
}

// Run migrates the object, or continues the migration recorded on it.
func (m *Migrator) Run(ctx context.Context, req Request) error {
	run := &migration{Migrator: m, req: req}
	var a apacheObject
	var r *record
	var err error
	for attempt := 1; ; attempt++ {
		if a, err = run.read(ctx); err != nil {
			return err
		}
		if r, err = recordOf(a); err != nil {
			return refuse("%v", err)
		}
		if r != nil {
			run.sayf("%s: continuing the migration recorded in annotation %s, at step %s", a, RecordAnnotation, r.Step)
			break
		}
		r, a, err = run.begin(ctx, a)
		// A conflict: the object changed between the read and the request (its operator wrote its
		// status, or another run began). Nothing was written; decide again on what is there now.
		if apierrors.IsConflict(err) {
			if attempt < 5 {
				continue
			}
			return refuse("%s changed under each of %d attempts to record the migration; nothing was changed: run the same command again", a, attempt)
		}
		if err != nil || r == nil {
			return err
		}
		break
	}
	if req.DryRun {
		run.sayf("dry run: %s has a migration recorded at step %s (annotation %s); a run would continue from there. Nothing was changed.",
			a.short(), r.Step, RecordAnnotation)
		return nil
	}
	if r.Step == stepSuspendRequested {
		if r, a, err = run.awaitSuspend(ctx, a, r); err != nil {
			return err
		}
	}
	if r.Step == stepCreating {
		if r, a, err = run.createTarget(ctx, a, r); err != nil {
			return err
		}
	}
	if r.Step != stepCreated {
		return refuse("%s: annotation %s has step %q, which this version of kubectl-flink does not know", a, RecordAnnotation, r.Step)
	}
	return run.finish(a, r)
}

// finish reports a finished migration, after checking the Apache object is still suspended.
func (m *migration) finish(a apacheObject, r *record) error {
	if state, _, _, _ := a.reconciledJob(); a.desiredState() != jobSuspended || state != jobSuspended {
		// Something resumed the Apache object after the migration: two copies of the job may run.
		return &Error{Reason: Failed, Message: fmt.Sprintf("%s was migrated to %s, but its spec.job.state is %s again "+
			"(status.reconciliationStatus.lastReconciledSpec job.state %s): the Apache operator starts the job beside flinkfsm's. "+
			"Suspend one of them now, then find what set it back (kubectl apply of the old manifest, Argo CD, Flux)",
			a, r.Target, a.desiredState(), orNone(state))}
	}
	follow := a.u.GetName()
	if a.kind == FlinkSessionJob {
		follow = "sessionjob/" + follow
	}
	m.sayf("left %s suspended; delete it when you no longer need it (kubectl delete %s.%s/%s -n %s)",
		a.short(), a.kind.Resource, ApacheGroup, a.u.GetName(), a.u.GetNamespace())
	m.sayf("until then keep it suspended: applying its old manifest (spec.job.state running) would start the job again beside flinkfsm's")
	m.sayf("flinkfsm runs the job as %s now: follow it with kubectl flink wait %s -n %s", r.Target, follow, a.u.GetNamespace())
	return nil
}

func (m *migration) sayf(format string, args ...interface{}) {
	fmt.Fprintln(m.Out, printable.Text(fmt.Sprintf(format, args...)))
}

// fetch reads the Apache object.
func (m *migration) fetch(ctx context.Context) (apacheObject, error) {
	u, err := m.Apache.Resource(m.req.Kind.resource()).Namespace(m.req.Namespace).Get(ctx, m.req.Name, metav1.GetOptions{})
	return apacheObject{kind: m.req.Kind, u: u}, err
}

// read reads the Apache object, refusing when it cannot.
func (m *migration) read(ctx context.Context) (apacheObject, error) {
	a, err := m.fetch(ctx)
	if apierrors.IsNotFound(err) {
		return apacheObject{}, refuse("%s %s %s/%s not found", ApacheGroup, m.req.Kind.Name, m.req.Namespace, m.req.Name)
	}
	if err != nil {
		return apacheObject{}, refuse("reading %s %s %s/%s: %v", ApacheGroup, m.req.Kind.Name, m.req.Namespace, m.req.Name, err)
	}
	return a, nil
}

// begin decides whether the object can be migrated and, unless this is a dry run, records the
// migration and asks for the suspend in one patch. The record is nil for a dry run.
func (m *migration) begin(ctx context.Context, a apacheObject) (*record, apacheObject, error) {
	r, t, err := m.plan(ctx, a)
	if err != nil {
		return nil, a, err
	}
	if m.req.DryRun {
		m.describe(a, r, t)
		return nil, a, nil
	}
	if r.Step == stepCreating {
		// Suspended before the migration: nothing to ask the Apache operator for.
		a, err = m.writeRecord(ctx, a, r, nil, a.u.GetResourceVersion())
		if err != nil {
			return nil, a, recordError(a, err)
		}
		return r, a, nil
	}
	suspend := map[string]interface{}{"state": jobSuspended, "upgradeMode": upgradeSavepoint}
	if r.Stateless {
		suspend = map[string]interface{}{"state": jobSuspended}
	}
	a, err = m.writeRecord(ctx, a, r, map[string]interface{}{"job": suspend}, a.u.GetResourceVersion())
	if err != nil {
		return nil, a, recordError(a, err)
	}
	if r.Stateless {
		m.sayf("asked %s %s to suspend (spec.job.state suspended; upgradeMode stateless: the job is cancelled without a savepoint, as --allow-stateless accepts)",
			ApacheGroup, a.short())
	} else {
		m.sayf("asked %s %s to suspend with a savepoint (spec.job.state suspended, spec.job.upgradeMode savepoint)", ApacheGroup, a.short())
	}
	m.sayf("recorded the request, and what the Apache operator had recorded before it, in annotation %s", RecordAnnotation)
	return r, a, nil
}

// recordError keeps a conflict for Run to retry; anything else refuses.
func recordError(a apacheObject, err error) error {
	if apierrors.IsConflict(err) {
		return err
	}
	return refuse("writing the migration's record (annotation %s) on %s: %v. Run the same command again: "+
		"it continues if the write landed, and starts over if it did not", RecordAnnotation, a, err)
}

// describe prints what a run would do.
func (m *migration) describe(a apacheObject, r *record, t *target) {
	m.sayf("dry run: nothing is changed. A migration of %s would:", a.short())
	switch {
	case r.Step == stepCreating && r.Stateless:
		m.sayf("  - record in annotation %s that the job, suspended already, moves without state", RecordAnnotation)
	case r.Step == stepCreating:
		m.sayf("  - record in annotation %s that the job, suspended already, moves from savepoint %s (%s)", RecordAnnotation, r.Savepoint, r.ProvenBy)
	case r.Stateless:
		m.sayf("  - record itself in annotation %s and, in the same patch, set spec.job.state suspended (upgradeMode stateless: no savepoint)", RecordAnnotation)
		m.sayf("  - wait up to %s for the Apache operator to stop the job", m.req.Timeout)
	default:
		m.sayf("  - record itself in annotation %s and, in the same patch, set spec.job.state suspended and spec.job.upgradeMode savepoint", RecordAnnotation)
		m.sayf("  - wait up to %s for the Apache operator to stop the job with a savepoint and record it "+
			"(status.jobStatus.upgradeSavepointPath, savepointInfo.lastSavepoint or an UPGRADE FlinkStateSnapshot)", m.req.Timeout)
	}
	switch {
	case r.Stateless:
		m.sayf("  - create %s/%s without state, state Running", t.kind(), t.meta().Name)
	case r.Savepoint != "":
		m.sayf("  - create %s/%s starting from %s, state Running", t.kind(), t.meta().Name, r.Savepoint)
	default:
		m.sayf("  - create %s/%s starting from that savepoint, state Running", t.kind(), t.meta().Name)
	}
	m.sayf("  - leave %s suspended, for you to delete", a.short())
}

// awaitSuspend waits until the Apache operator has stopped the job and recorded its savepoint,
// proves the savepoint the newest state, and records it before anything is created from it.
func (m *migration) awaitSuspend(ctx context.Context, a apacheObject, r *record) (*record, apacheObject, error) {
	m.sayf("waiting for the Apache operator to record it (up to %s)", m.req.Timeout)
	deadline := m.Clock.Now().Add(m.req.Timeout)
	said := ""
	for {
		v := m.look(ctx, a, r)
		switch v.outcome {
		case proven:
			r.Step, r.Savepoint, r.ProvenBy = stepCreating, v.savepoint, v.provenBy
			if r.Savepoint != "" {
				at := v.at.UTC()
				r.SavepointAt = &at
				m.sayf("savepoint %s recorded at %s; job %s (proven by %s)", v.savepoint, at.Format(time.RFC3339Nano), v.jobState, v.provenBy)
			} else {
				m.sayf("%s stopped without a savepoint; job %s", a.short(), v.jobState)
			}
			written, err := m.writeRecord(ctx, a, r, nil, "")
			if err != nil {
				return nil, a, refuse("recording the savepoint in annotation %s on %s: %v; run the same command again to continue", RecordAnnotation, a, err)
			}
			return r, written, nil
		case failed:
			return nil, a, &Error{Reason: Failed, Message: fmt.Sprintf("%s: %s. The Apache operator retries the suspend: run the same command again "+
				"to follow it; to keep the job on the Apache operator instead, %s", a, v.why, abandonHint(a, r))}
		case unprovable:
			return nil, a, &Error{Reason: Failed, Message: fmt.Sprintf("%s: %s. Nothing was created; %s stays as it is. Check the fields named, "+
				"then create the flinkfsm object by hand from the state you choose, or %s", a, v.why, a.short(), abandonHint(a, r))}
		}
		if v.why != said {
			m.sayf("waiting: %s", v.why)
			said = v.why
		}
		if !m.Clock.Now().Before(deadline) {
			return nil, a, &Error{Reason: TimedOut, Message: fmt.Sprintf("%s: the Apache operator did not stop the job and record it within %s (%s). "+
				"It goes on; the request stays recorded in annotation %s: run the same command again to continue waiting",
				a, m.req.Timeout, v.why, RecordAnnotation)}
		}
		if err := m.Clock.Sleep(ctx, min(m.Poll, deadline.Sub(m.Clock.Now()))); err != nil {
			return nil, a, &Error{Reason: TimedOut, Message: fmt.Sprintf("interrupted while waiting for %s: the request stays recorded in annotation %s; "+
				"run the same command again to continue", a, RecordAnnotation)}
		}
		next, err := m.fetch(ctx)
		switch {
		case apierrors.IsNotFound(err):
			return nil, a, refuse("%s was deleted while its job was being stopped; nothing was created", a)
		case err != nil:
			// The API server may be briefly out of reach; the deadline bounds the wait.
			m.sayf("waiting: reading %s: %v", a, err)
		default:
			a = next
		}
	}
}

// look judges the object as it is now, with its snapshots.
func (m *migration) look(ctx context.Context, a apacheObject, r *record) verdict {
	snapshots, err := snapshotsOf(ctx, m.Apache, a)
	if err != nil {
		return wait("%v", err)
	}
	return judge(a, snapshots, r)
}

// abandonHint says how to give the job back to the Apache operator: spec.job as it was, and the
// record removed.
func abandonHint(a apacheObject, r *record) string {
	mode := r.Original.UpgradeMode
	if mode == "" {
		mode = upgradeStateless
	}
	return fmt.Sprintf("set spec.job back and remove the record: kubectl patch %s %s -n %s --type merge -p "+
		`'{"metadata":{"annotations":{"%s":null}},"spec":{"job":{"state":"running","upgradeMode":"%s"}}}'`,
		a.kind.Resource+"."+ApacheGroup, a.u.GetName(), a.u.GetNamespace(), RecordAnnotation, mode)
}

// createTarget creates the flinkfsm object from the recorded savepoint, unless this migration
// created it already, and records that it did.
func (m *migration) createTarget(ctx context.Context, a apacheObject, r *record) (*record, apacheObject, error) {
	t, err := m.convert(a, r.Original, r.Savepoint)
	if err != nil {
		return nil, a, refuse("%v; the job is stopped on the Apache operator, its savepoint recorded in annotation %s: "+
			"run the same command again once the conversion works", err, RecordAnnotation)
	}
	m.warn(t)
	found, err := m.existing(ctx, t)
	if err != nil {
		return nil, a, refuse("%v", err)
	}
	blocking, warnings := m.leftovers(ctx, a, t)
	if found == nil {
		if err := m.checkSessionCluster(ctx, t); err != nil {
			return nil, a, err
		}
		if len(blocking) > 0 {
			return nil, a, refuse("%s; the job is stopped on the Apache operator, its savepoint recorded in annotation %s: "+
				"run the same command again once the name is free", strings.Join(blocking, "; "), RecordAnnotation)
		}
		err := m.create(ctx, t)
		switch {
		case err == nil:
			m.sayf("created %s starting from %s", t, orWithoutState(r.Savepoint))
		case apierrors.IsAlreadyExists(err):
			// Another run of the same migration created it between the read and the create.
			if found, err = m.existing(ctx, t); err != nil || found == nil {
				return nil, a, refuse("%s: created meanwhile, then not readable: %v", t, err)
			}
		default:
			return nil, a, refuse("%v; run the same command again to continue", err)
		}
	}
	if found != nil {
		if uid := found.meta().Annotations[FromUIDAnnotation]; uid != string(a.u.GetUID()) {
			return nil, a, refuse("%s exists and was not created by this migration (annotation %s is %q, not %s's UID %s): "+
				"the job stays stopped on the Apache operator; rename or remove that object, then run the same command again",
				t, FromUIDAnnotation, uid, a.short(), a.u.GetUID())
		}
		if found.startsFrom() != r.Savepoint {
			return nil, a, refuse("%s was created by this migration but starts from %q, not the recorded %q", t, found.startsFrom(), r.Savepoint)
		}
		m.sayf("%s exists already, created by this migration starting from %s", t, orWithoutState(r.Savepoint))
	}
	for _, w := range append(blocking, warnings...) {
		m.sayf("warning: %s", w)
	}
	r.Step = stepCreated
	written, err := m.writeRecord(ctx, a, r, nil, "")
	if err != nil {
		return nil, a, refuse("%s is created, but recording that in annotation %s on %s failed: %v; run the same command again to finish",
			t, RecordAnnotation, a, err)
	}
	return r, written, nil
}

func (m *migration) warn(t *target) {
	if m.warned {
		return
	}
	m.warned = true
	for _, w := range t.warnings {
		m.sayf("warning: %s", w)
	}
}

func orWithoutState(savepoint string) string {
	if savepoint == "" {
		return "no state (stateless)"
	}
	return savepoint
}
