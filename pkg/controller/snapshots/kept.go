package snapshots

import (
	"sync"
	"time"
)

// What the guardian kept, remembered per object: a state another object needs stays needed for a
// while, so retention asks again only every keptRecheck (a read of the whole namespace each time),
// and says so in an Event only when who needs it changes, not at every pass.

// keptRecheck is how long retention trusts a verdict that kept a state before asking again.
const keptRecheck = 5 * time.Minute

// Kept are, per object, the states past retention the guardian kept, by path. Each object's
// notes are replaced at each pass that asks, so they hold only its current candidates; they are the
// object's by its uid, so one created again under the name knows nothing of its namesake's.
type Kept struct {
	objects sync.Map // the object's key → keptOf
}

type keptOf struct {
	uid   string
	notes map[string]keptNote
}

type keptNote struct {
	why string
	at  time.Time
	// untilAnswered: kept only until a savepoint's answer is read, so asked about again next pass.
	untilAnswered bool
}

func (k *Kept) of(key, uid string) map[string]keptNote {
	if v, ok := k.objects.Load(key); ok && v.(keptOf).uid == uid {
		return v.(keptOf).notes
	}
	return nil
}

func (k *Kept) store(key, uid string, notes map[string]keptNote) {
	if len(notes) == 0 {
		k.objects.Delete(key)
		return
	}
	k.objects.Store(key, keptOf{uid: uid, notes: notes})
}

// Forget drops what is known of a deleted object.
func (k *Kept) Forget(key string) { k.objects.Delete(key) }

// recent tells whether the state at path was kept less than keptRecheck ago.
func (n keptNote) recent(now time.Time) bool { return !n.untilAnswered && now.Sub(n.at) < keptRecheck }
