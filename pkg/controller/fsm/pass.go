package fsm

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

// Pass is the machine's part of one pass over one object: the object as the pass works on it and
// as the pass read it, where it stands in the machine, and what the pass has decided so far. Each
// kind's pass type embeds it beside what the kind's handlers read.
type Pass struct {
	// Subject is the working copy of the object; Stored is the object as the pass read it.
	Subject, Stored Subject
	// Meta and Machine point into the working copy: its metadata and where it stands in the
	// state machine.
	Meta    *metav1.ObjectMeta
	Machine *v1beta1.MachineStatus
	Config  *config.Config
	Now     time.Time
	// Events are what the pass tells of the object once its status is written.
	Events []Event
	// Overdue is set when the phase's deadline has passed. The handler still runs, so that what
	// Flink completed meanwhile is used, but it starts nothing new: no trigger, no submission.
	Overdue bool
	// GivesUpAt is when the phase the pass began in gives up; zero for a phase without a deadline.
	GivesUpAt time.Time
	// WaitingOn is what the phase waits on, as far as it is known (a pod's problem): said in
	// status.reason while waiting, and the cause given when the deadline passes.
	WaitingOn string
	// Transitioned is set when the pass moved the object into another phase.
	Transitioned bool
	// RanOn is set when the pass moved into a phase and ran its handler too (Spec.RunsAtOnce).
	RanOn bool
}

// Event is an Event the pass tells of its object.
type Event struct {
	Warning         bool
	Reason, Message string
}

// Bind makes working the pass's object and stored the object as read.
func (p *Pass) Bind(working, stored Subject) {
	p.Subject, p.Stored = working, stored
	p.Meta, p.Machine = working.Meta(), working.Machine()
}

// Tell adds an Event to those the pass tells.
func (p *Pass) Tell(warning bool, reason, message string) {
	p.Events = append(p.Events, Event{warning, reason, message})
}

// Escape escapes, with escape, the free text of what the machine writes of the object: the
// reason, the last error, the conditions' messages and the history's reasons.
func (p *Pass) Escape(escape func(string) string) {
	st := p.Machine
	st.Reason = escape(st.Reason)
	if e := st.LastSeenError; e != nil {
		e.AppError = escape(e.AppError)
	}
	for i := range st.Conditions {
		st.Conditions[i].Message = escape(st.Conditions[i].Message)
	}
	p.Subject.EscapeHistory(escape)
}
