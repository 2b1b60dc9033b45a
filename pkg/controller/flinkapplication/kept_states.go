package flinkapplication

import (
	"sync"
	"time"
)

// What the guardian kept, remembered per object: a state another object needs stays needed for a
// while, so retention asks again only every keptRecheck (a read of the whole namespace each time),
// and says so in an Event only when who needs it changes, not at every pass.

// keptRecheck is how long retention trusts a verdict that kept a state before asking again.
const keptRecheck = 5 * time.Minute

// keptStates are, per object, the states past retention the guardian kept, by path. Each object's
// notes are replaced at each pass that asks, so they hold only its current candidates.
type keptStates struct {
	objects sync.Map // writeKey → map[string]keptNote
}

type keptNote struct {
	why string
	at  time.Time
}

func (k *keptStates) of(key string) map[string]keptNote {
	if v, ok := k.objects.Load(key); ok {
		return v.(map[string]keptNote)
	}
	return nil
}

func (k *keptStates) store(key string, notes map[string]keptNote) {
	if len(notes) == 0 {
		k.objects.Delete(key)
		return
	}
	k.objects.Store(key, notes)
}

// recent tells whether the state at path was kept less than keptRecheck ago.
func (n keptNote) recent(now time.Time) bool { return now.Sub(n.at) < keptRecheck }
