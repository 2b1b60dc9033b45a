package fsm

import (
	"errors"
	"testing"
	"time"

	stdconfig "github.com/flyteorg/flytestdlib/config"
	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

// object is a Subject of the tests: a FlinkApplication's status.
type object struct{ *v1beta1.FlinkApplication }

func (o object) Object() runtime.Object            { return o.FlinkApplication }
func (o object) Meta() *metav1.ObjectMeta          { return &o.ObjectMeta }
func (o object) Phase() Phase                      { return Phase(o.FlinkApplication.Status.Phase) }
func (o object) SetPhase(p Phase)                  { o.FlinkApplication.Status.Phase = v1beta1.FlinkApplicationPhase(p) }
func (o object) Machine() *v1beta1.MachineStatus   { return &o.FlinkApplication.Status.MachineStatus }
func (o object) Status() interface{}               { return &o.FlinkApplication.Status }
func (o object) EscapeHistory(func(string) string) {}
func (o object) LastTransition() (Phase, string)   { return "", "" }
func (o object) Enter(_, to Phase, _ metav1.Time, _ string) {
	o.FlinkApplication.Status.Phase = v1beta1.FlinkApplicationPhase(to)
}
func (o object) SaveStatus() func() {
	saved := o.FlinkApplication.Status.DeepCopy()
	return func() { o.FlinkApplication.Status = *saved }
}

func passIn(phase Phase) *Pass {
	o := object{&v1beta1.FlinkApplication{}}
	o.SetPhase(phase)
	p := &Pass{Now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), Config: &config.Config{MaxRetries: 2,
		BaseBackoffDuration: stdconfig.Duration{Duration: time.Second}, MaxBackoffDuration: stdconfig.Duration{Duration: time.Minute}}}
	p.Bind(o, o)
	return p
}

func machineOf(table map[Phase]Spec[*Pass]) Machine[*Pass] {
	return Machine[*Pass]{
		Pass:              func(p *Pass) *Pass { return p },
		Table:             func(*Pass) map[Phase]Spec[*Pass] { return table },
		Key:               func(*Pass) string { return "k" },
		DeletionRequested: func(*Pass) string { return "deleted" },
		Classify:          func(error) (string, bool) { return "Call", true },
	}
}

// A handler that asks for a transition its row does not declare changes nothing it decided along
// with it: the refusal alone is written.
func TestAnUndeclaredTransitionIsRefusedWithNothingTheHandlerDecided(t *testing.T) {
	m := machineOf(map[Phase]Spec[*Pass]{PhaseRunning: {Poll: StatusPoll, Handle: func(p *Pass) Outcome {
		p.Machine.Reason = "half done"
		p.Tell(false, "Half", "half done")
		return MoveTo(PhaseSubmitting, "Resubmit", "again")
	}}})
	p := passIn(PhaseRunning)
	out := m.Step(p, &Deadlines{})
	assert.Equal(t, "InvalidTransition", out.Reason)
	assert.Equal(t, PhaseRunning, p.Subject.Phase())
	assert.Equal(t, []Event{{Warning: true, Reason: "InvalidTransition", Message: out.Message}}, p.Events)
}

// A failed attempt of a moving phase is retried with backoff kept in status, and the phase gives
// up once its retries are spent.
func TestAFailedAttemptIsRetriedThenGivenUp(t *testing.T) {
	gaveUp := ""
	m := machineOf(map[Phase]Spec[*Pass]{PhaseSubmitting: {Poll: WaitPoll,
		Handle: func(*Pass) Outcome { return Failed(errors.New("refused")) },
		Exits:  []Exit{{To: PhaseDeployFailed, When: "given up"}},
		GiveUp: func(_ *Pass, cause string) Outcome { gaveUp = cause; return WarnTo(PhaseDeployFailed, "GaveUp", cause) }}})
	p := passIn(PhaseSubmitting)
	d := &Deadlines{}
	assert.Equal(t, time.Second, m.Step(p, d).After)
	assert.Equal(t, Stay(time.Second), m.Step(p, d), "within the backoff the handler is not asked")
	p.Now = p.Now.Add(time.Second)
	assert.Equal(t, 2*time.Second, m.Step(p, d).After)
	p.Now = p.Now.Add(2 * time.Second)
	out := m.Step(p, d)
	assert.Equal(t, PhaseDeployFailed, out.Next)
	assert.Equal(t, "refused (after 2 retries)", gaveUp)
	assert.Equal(t, PhaseDeployFailed, p.Subject.Phase())
	assert.True(t, p.Transitioned)
}

// A deleted object moves to Deleting before any handler runs.
func TestADeletedObjectMovesToDeletingFirst(t *testing.T) {
	m := machineOf(map[Phase]Spec[*Pass]{PhaseRunning: {Handle: func(*Pass) Outcome { panic("not asked") }}})
	p := passIn(PhaseRunning)
	now := metav1.NewTime(p.Now)
	p.Meta.DeletionTimestamp = &now
	assert.Equal(t, PhaseDeleting, m.Step(p, &Deadlines{}).Next)
	assert.Equal(t, PhaseDeleting, p.Subject.Phase())
	assert.False(t, AtRest(p.Subject))
}

// The one status write is a merge patch guarded by the resourceVersion the pass read, stamped
// with the time of the write; a pass that changed nothing a reader sees writes nothing.
func TestTheStatusWriteIsGuardedByTheResourceVersionRead(t *testing.T) {
	working := object{&v1beta1.FlinkApplication{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "7"}}}
	stored := object{working.DeepCopy()}
	p := passIn(PhaseRunning)
	p.Bind(working, stored)
	patch, err := p.WritePatch()
	assert.NoError(t, err)
	assert.Nil(t, patch)
	p.Machine.Reason = "moved"
	patch, err = p.WritePatch()
	assert.NoError(t, err)
	assert.JSONEq(t, `{"metadata":{"resourceVersion":"7"},"status":{"reason":"moved","lastUpdatedAt":"2026-12-01T12:00:00Z"}}`, string(patch))
}

// A pass tells its Events and its transition only once its status is written: a failed write
// tells nothing, so that no Event speaks of a move the object's status does not show.
func TestAPassTellsNothingOfAFailedWrite(t *testing.T) {
	var order []string
	writeErr := errors.New("conflict")
	k := Kind[*Pass]{
		Machine: machineOf(map[Phase]Spec[*Pass]{PhaseNew: {Poll: WaitPoll, Exits: []Exit{{To: PhaseRunning, When: "started"}},
			Handle: func(*Pass) Outcome { order = append(order, "step"); return MoveTo(PhaseRunning, "Started", "started") }}}),
		Name:   "Test",
		Before: func(*Pass) { order = append(order, "before") },
		After:  func(*Pass) { order = append(order, "after") },
		Write:  func(*Pass) (bool, error) { order = append(order, "write"); return false, writeErr },
		Tell:   func(_ *Pass, ev Event) { order = append(order, "tell "+ev.Reason) },
		Logged: func(_ *Pass, from, to Phase) { order = append(order, "log "+string(from)+" "+string(to)) },
	}
	_, err := k.Run(passIn(PhaseNew), &Deadlines{}, nil)
	assert.Equal(t, writeErr, err)
	assert.Equal(t, []string{"before", "step", "after", "write"}, order)

	order, writeErr = nil, nil
	after, err := k.Run(passIn(PhaseNew), &Deadlines{}, nil)
	assert.NoError(t, err)
	assert.Equal(t, AtOnce, after)
	assert.Equal(t, []string{"before", "step", "after", "write", "tell Started", "log New Running"}, order)
}
