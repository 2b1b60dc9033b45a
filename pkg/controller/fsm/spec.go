package fsm

import (
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

// Spec is one row of a kind's phase table, over the kind's pass type P: the handler of a phase,
// the phases it may move to, how long it may last, and where it goes when its retries or its
// deadline run out.
type Spec[P any] struct {
	Handle func(P) Outcome
	// Exits are the phases Handle may move to; the state machine refuses any other, so the
	// generated diagram in docs/ is the truth.
	Exits []Exit
	// Deadline bounds the time in the phase; nil for phases that may last indefinitely.
	Deadline func(P) time.Duration
	// Progress, when set, counts the steps the phase has made, and the most it can make; the
	// deadline then bounds the time since the last step, and the steps it can make bound the time
	// since the phase began.
	Progress func(P) Steps
	// GiveUp is called with the cause when retries or the deadline run out; nil keeps the phase
	// and stops retrying until the spec changes.
	GiveUp func(p P, cause string) Outcome
	// Poll is how soon the phase looks again when its handler does not say.
	Poll func(*config.Config) time.Duration
	// Enter runs in the pass that moves into the phase, whichever phase it comes from. What the
	// phase must have recorded before its first side effect is set here, so that the transition's
	// own status write carries it instead of a write of its own.
	Enter func(P)
	// RunsAtOnce tells whether the phase's handler may run in the pass that moved into it: when
	// all its first side effect needs is already stored, the pass goes on instead of writing the
	// transition and coming back for it.
	RunsAtOnce func(P) bool
	// Follows are the savepoint purposes whose ledger entries the phase's handler follows itself,
	// when asked in the current visit of the phase; the kind follows every other Pending one.
	Follows []v1beta1.SavepointPurpose
}

// Exit is a transition a phase may make, and when.
type Exit struct {
	To   Phase
	When string
}

// Allows tells whether the phase may move to next.
func (s Spec[P]) Allows(next Phase) bool {
	for _, e := range s.Exits {
		if e.To == next {
			return true
		}
	}
	return false
}

// WaitPoll is the poll of phases that wait on Kubernetes or Flink to act.
func WaitPoll(c *config.Config) time.Duration { return c.WaitPollInterval.Duration }

// StatusPoll is the poll of phases that watch a job.
func StatusPoll(c *config.Config) time.Duration { return c.StatusPollInterval.Duration }

// Steps are the steps a phase took, and the most it can take (a starting cluster's pods, say).
type Steps struct{ Taken, Most int }
