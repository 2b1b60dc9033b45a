package main

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
)

// What a write of an owner or of a FlinkSnapshot did for savepoints. The target is that
// periodic savepoints cost the API server what the snapshots themselves need and nothing more:
// per savepoint, two owner writes (the ledger entry asked for before the trigger, then how it
// ended) and two FlinkSnapshot writes (its create, then its status, which a create cannot set).
// Telling the writes apart by what they changed is what lets a miss say where the extra writes are.

// ledgerChange counts what one owner write did to the savepoint entries of its ledger.
// Checkpoints are left out: Flink's own are recorded without being asked for, and the operator's
// triggered ones are not savepoints.
type ledgerChange struct {
	// Asked counts entries that appeared Pending: the write-ahead record before a trigger.
	Asked int
	// Triggered counts Pending entries whose trigger id changed: Flink before 1.15 names its own.
	Triggered int
	// Ended counts entries that became Completed or Failed (Failed counts those that failed); an
	// entry that appeared already ended counts as asked and ended in one write.
	Ended, Failed int
	// Named counts entries that came to name their FlinkSnapshot.
	Named int
	// Trimmed counts entries the write removed: retention let them go.
	Trimmed int
	// Changed counts entries changed otherwise.
	Changed int
}

// stages names what the write did, in the order a savepoint goes through them, as
// "asked", "ended+named" and the like; "" when it did nothing to a savepoint entry.
func (c ledgerChange) stages() string {
	var out []string
	for _, s := range []struct {
		name string
		n    int
	}{{"asked", c.Asked}, {"triggered", c.Triggered}, {"ended", c.Ended}, {"named", c.Named}, {"trimmed", c.Trimmed}, {"changed", c.Changed}} {
		if s.n > 0 {
			out = append(out, s.name)
		}
	}
	return strings.Join(out, "+")
}

// savepointEntries are a ledger's savepoint entries by what identifies one across writes: its
// purpose, job and trigger time (the trigger id may change, see ledgerChange.Triggered).
func savepointEntries(es []v1beta1.StateEntry) map[string]v1beta1.StateEntry {
	out := map[string]v1beta1.StateEntry{}
	for _, e := range es {
		if ledger.IsCheckpoint(e.Purpose) {
			continue
		}
		key := string(e.Purpose) + "|" + e.JobID + "|"
		if e.TriggerTime != nil {
			key += e.TriggerTime.UTC().Format(time.RFC3339)
		} else {
			// Recorded rather than asked for (found in Flink's history): its path is its identity.
			key += "path:" + e.Path
		}
		out[key] = e
	}
	return out
}

// changeOfLedger is what the write from before to after did to the ledger's savepoint entries.
func changeOfLedger(before, after []v1beta1.StateEntry) ledgerChange {
	var c ledgerChange
	if reflect.DeepEqual(before, after) {
		return c
	}
	was, is := savepointEntries(before), savepointEntries(after)
	for key, e := range is {
		old, existed := was[key]
		ended := e.Result != v1beta1.StatePending
		switch {
		case !existed:
			c.Asked++
			if ended {
				c.Ended++
			}
		case old.Result == v1beta1.StatePending && ended:
			c.Ended++
		}
		if ended && e.Result == v1beta1.StateFailed && (!existed || old.Result == v1beta1.StatePending) {
			c.Failed++
		}
		if !existed {
			if e.Snapshot != "" {
				c.Named++
			}
			continue
		}
		if old.TriggerID != e.TriggerID && e.Result == v1beta1.StatePending {
			c.Triggered++
		}
		if old.Snapshot == "" && e.Snapshot != "" {
			c.Named++
		}
		// Anything else that changed in a known entry, beyond the steps counted above.
		o, n := old, e
		o.TriggerID, n.TriggerID, o.Snapshot, n.Snapshot = "", "", "", ""
		if old.Result == v1beta1.StatePending && ended {
			o.Result, o.Path, o.Time, o.Reason = n.Result, n.Path, n.Time, n.Reason
		}
		if !reflect.DeepEqual(o, n) {
			c.Changed++
		}
	}
	for key := range was {
		if _, still := is[key]; !still {
			c.Trimmed++
		}
	}
	return c
}

// snapshotWrite names what one change of a FlinkSnapshot was: "create", "status", "metadata"
// (labels, annotations, finalizers), "delete requested" (a deletionTimestamp: the object waits for
// its finalizer), "spec", or "other" (a new resourceVersion with none of these, managedFields
// alone). A status write that also changed metadata counts as a status write: one request
// changes one or the other.
func snapshotWrite(before, after *v1beta1.FlinkSnapshot) string {
	switch {
	case before == nil:
		return "create"
	case before.DeletionTimestamp == nil && after.DeletionTimestamp != nil:
		return "delete requested"
	case !reflect.DeepEqual(before.Status, after.Status):
		return "status"
	case !reflect.DeepEqual(before.Labels, after.Labels), !reflect.DeepEqual(before.Annotations, after.Annotations),
		!reflect.DeepEqual(before.Finalizers, after.Finalizers):
		return "metadata"
	case !reflect.DeepEqual(before.Spec, after.Spec):
		return "spec"
	}
	return "other"
}

// savepointCounts are what a group of applications with periodic savepoints did in a window.
type savepointCounts struct {
	Apps   int
	Window time.Duration
	// OwnerWrites counts the owners' new resourceVersions; OwnerWritesForSavepoints, those that
	// changed a savepoint entry of the ledger.
	OwnerWrites, OwnerWritesForSavepoints int
	// Savepoints counts ledger entries that ended (Completed or Failed).
	Savepoints int
	// SnapshotWrites counts the FlinkSnapshots' creates and changes by snapshotWrite's kind, and
	// "delete" for an object gone.
	SnapshotWrites map[string]int
	// SnapshotRequests counts the API server's requests to FlinkSnapshots by "VERB resource" (as
	// apiRequests names them). An update that changes nothing costs the API server a request (decoding,
	// admission, the comparison with what is stored) and no new resourceVersion: only these show it.
	SnapshotRequests map[string]float64
}

// snapshotWritesNeeded are the FlinkSnapshot writes a savepoint needs: its create and its status.
// Retention's deletes are counted apart (a bounded history needs one per savepoint once it is full,
// which a window of minutes rarely reaches).
var snapshotWritesNeeded = []string{"create", "status"}

// savepointCost is the arithmetic of savepointCounts: per application per hour, and per savepoint.
type savepointCost struct {
	OwnerWritesPerAppHour                 float64 `json:"ownerWritesPerAppPerHour"`
	SnapshotWritesPerAppHour              float64 `json:"snapshotWritesPerAppPerHour"`
	SavepointsPerAppHour                  float64 `json:"savepointsPerAppPerHour"`
	OwnerWritesNotForSavepointsPerAppHour float64 `json:"ownerWritesNotForSavepointsPerAppPerHour"`
	// Per savepoint: owner writes, and FlinkSnapshot writes other than deletes; 0 without a
	// savepoint (JSON has no NaN), which the targets then count as missed.
	OwnerWritesPerSavepoint    float64 `json:"ownerWritesPerSavepoint"`
	SnapshotWritesPerSavepoint float64 `json:"snapshotWritesPerSavepoint"`
	// SnapshotWritesBeyondNeeded counts the FlinkSnapshot writes in the window that were neither a
	// create nor a status write nor a delete.
	SnapshotWritesBeyondNeeded int     `json:"snapshotWritesBeyondNeeded"`
	SnapshotDeletesPerAppHour  float64 `json:"snapshotDeletesPerAppPerHour"`
	// SnapshotWriteRequests counts the requests that create, update or patch a FlinkSnapshot
	// (deletes apart); SnapshotRequestsForNothing, those of them that made no write.
	SnapshotWriteRequests             int     `json:"snapshotWriteRequests"`
	SnapshotWriteRequestsPerSavepoint float64 `json:"snapshotWriteRequestsPerSavepoint"`
	SnapshotRequestsForNothing        int     `json:"snapshotRequestsThatChangedNothing"`
}

func (c savepointCounts) cost() savepointCost {
	var out savepointCost
	appHours := float64(c.Apps) * c.Window.Hours()
	if appHours <= 0 {
		return out
	}
	snapshotWrites, deletes := 0, 0
	for kind, n := range c.SnapshotWrites {
		switch {
		case kind == "delete", kind == "delete requested":
			deletes += n
			continue
		case !slices.Contains(snapshotWritesNeeded, kind):
			out.SnapshotWritesBeyondNeeded += n
		}
		snapshotWrites += n
	}
	out.OwnerWritesPerAppHour = float64(c.OwnerWrites) / appHours
	out.SnapshotWritesPerAppHour = float64(snapshotWrites) / appHours
	out.SavepointsPerAppHour = float64(c.Savepoints) / appHours
	out.OwnerWritesNotForSavepointsPerAppHour = float64(c.OwnerWrites-c.OwnerWritesForSavepoints) / appHours
	out.SnapshotDeletesPerAppHour = float64(deletes) / appHours
	for key, n := range c.SnapshotRequests {
		if verb, _, _ := strings.Cut(key, " "); verb == "POST" || verb == "PUT" || verb == "PATCH" {
			out.SnapshotWriteRequests += int(n)
		}
	}
	out.SnapshotRequestsForNothing = max(0, out.SnapshotWriteRequests-snapshotWrites)
	if c.Savepoints > 0 {
		out.SnapshotWriteRequestsPerSavepoint = float64(out.SnapshotWriteRequests) / float64(c.Savepoints)
		out.OwnerWritesPerSavepoint = float64(c.OwnerWritesForSavepoints) / float64(c.Savepoints)
		out.SnapshotWritesPerSavepoint = float64(snapshotWrites) / float64(c.Savepoints)
	}
	return out
}

// describeCounts lists counts by kind, the largest first, for the summary.
func describeCounts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		name := k
		if name == "" {
			name = "(no savepoint entry)"
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, m[k]))
	}
	return strings.Join(parts, ", ")
}
