package guardian

import (
	"fmt"
	"sort"
	"strings"
)

// Holder is an object that may need durable state, told apart from a namesake by its UID.
type Holder struct {
	Kind, Name string
	// UID is the object's uid; "" when it is not known (an object read from an older status).
	UID string
}

func (h Holder) String() string { return h.Kind + " " + h.Name }

// SnapshotKind is the kind of a FlinkSnapshot as a holder: one that is not being deleted keeps the
// state it shows, whichever other FlinkSnapshot of that state goes.
const SnapshotKind = "FlinkSnapshot"

// Use is one thing a holder names, and why it needs it.
type Use struct {
	// Name is a state's path, a FlinkSnapshot's name or an HA cluster id, as the field says.
	Name string
	// Why says which field or record names it ("spec.savepointPath", "the state job X started from").
	Why string
}

// References is everything one holder may still need.
type References struct {
	Holder Holder
	// Paths are states it names by location: what its jobs run from or will start from, what its
	// spec names, its final savepoint, the newest state of each job it records, what a rollback or
	// a way back would restore.
	Paths []Use
	// Snapshots are FlinkSnapshots it names by name (spec.restoreSnapshot).
	Snapshots []Use
	// HAClusters are cluster ids whose HA ConfigMaps a cluster of it runs, or may run again, from.
	HAClusters []Use
	// Pending are jobs (by id) with a savepoint or checkpoint asked for whose result is not known
	// yet, or whose end can no longer be learned: Flink may have completed it, and the job's newest
	// state is then a path nobody has read. Each holds every path Flink would give such a state
	// (PendingStateOf) but those some holder's records give to a state they know (Recorded).
	Pending []Use
	// Recorded are the paths the holder's records (its status, which only the operator writes)
	// give to a state they know: none of them is anybody's pending result.
	Recorded []string
}

// PendingStateOf tells whether path could be a state Flink completed for the job: a savepoint,
// which Flink names savepoint-<the job id's first 6 characters>-<random>, or a checkpoint, in a
// directory named after the job id.
func PendingStateOf(jobID, path string) bool {
	if len(jobID) < 6 || path == "" {
		return false
	}
	p := strings.TrimSuffix(strings.TrimSuffix(path, "/_metadata"), "/")
	base := p[strings.LastIndex(p, "/")+1:]
	return strings.HasPrefix(base, "savepoint-"+jobID[:6]+"-") || strings.Contains(p, "/"+jobID+"/")
}

// Snapshot is a FlinkSnapshot as the guardian needs it: its name and the state it shows.
type Snapshot struct {
	Name, Path string
}

// Namespace is what the guardian knows of one namespace in one pass.
type Namespace struct {
	refs []References
	// snapshotPaths are the paths of the FlinkSnapshots of the namespace, by name.
	snapshotPaths map[string]string
	// recorded are the paths some holder's records give to a state they know.
	recorded map[string]bool
}

// NewNamespace is the guardian of a namespace whose objects name refs, and whose FlinkSnapshots are
// snapshots. A reference to a FlinkSnapshot by name covers the state it shows.
func NewNamespace(refs []References, snapshots []Snapshot) *Namespace {
	n := &Namespace{refs: refs, snapshotPaths: map[string]string{}, recorded: map[string]bool{}}
	for _, s := range snapshots {
		if s.Path != "" {
			n.snapshotPaths[s.Name] = s.Path
		}
	}
	// What a FlinkSnapshot shows is not a record: its annotations and spec are the tenant's to write,
	// and the operator makes one before the status that records its result is written.
	for _, r := range refs {
		for _, p := range r.Recorded {
			n.recorded[p] = true
		}
	}
	return n
}

// State is a piece of durable state somebody asks to delete. Set the fields that describe it: a
// savepoint's Path (and the Snapshot that shows it, if any), or an HACluster id.
type State struct {
	Path      string
	Snapshot  string
	HACluster string
}

func (s State) String() string {
	switch {
	case s.HACluster != "":
		return "the HA ConfigMaps of cluster " + s.HACluster
	case s.Snapshot != "" && s.Path != "":
		return fmt.Sprintf("%s (FlinkSnapshot %s)", s.Path, s.Snapshot)
	case s.Snapshot != "":
		return "FlinkSnapshot " + s.Snapshot
	}
	return s.Path
}

// Need is one holder's reason to keep a state.
type Need struct {
	Holder Holder
	Why    string
	// UntilAnswered says the need lasts until Flink's answer about a savepoint or checkpoint is
	// read: whoever wanted the state gone asks again later, rather than giving it up for good.
	UntilAnswered bool
}

// Verdict is the guardian's answer: the state may go only when nothing needs it.
type Verdict struct {
	State State
	Needs []Need
}

// MayGo tells whether the state may be deleted.
func (v Verdict) MayGo() bool { return len(v.Needs) == 0 }

// OnlyUntilAnswered tells whether every need lasts only until an answer about a pending state is
// read: the deletion is to be asked again, not given up.
func (v Verdict) OnlyUntilAnswered() bool {
	for _, n := range v.Needs {
		if !n.UntilAnswered {
			return false
		}
	}
	return len(v.Needs) > 0
}

// String names the state and who needs it, for an Event or a log line.
func (v Verdict) String() string {
	if v.MayGo() {
		return v.State.String() + " is needed by nothing"
	}
	var by []string
	for _, n := range v.Needs {
		by = append(by, fmt.Sprintf("%s (%s)", n.Holder, n.Why))
	}
	sort.Strings(by)
	return v.State.String() + " is still needed by " + strings.Join(by, ", ")
}

// MayDelete answers whether anything the guardian knows of needs the state. A savepoint is needed
// when any holder names its path, or names by name the FlinkSnapshot that shows it, or any
// FlinkSnapshot whose path is the same, or may be the result of a savepoint or checkpoint a holder
// asked for and has no answer to yet; an HA cluster when any holder names its id.
func (n *Namespace) MayDelete(s State) Verdict {
	v := Verdict{State: s}
	for _, r := range n.refs {
		if r.Holder.Kind == SnapshotKind && r.Holder.Name == s.Snapshot && s.Snapshot != "" {
			// The FlinkSnapshot asking to go does not keep its own state; any other that shows it does.
			continue
		}
		for _, u := range r.Paths {
			if s.Path != "" && u.Name == s.Path {
				v.Needs = append(v.Needs, Need{Holder: r.Holder, Why: u.Why})
			}
		}
		for _, u := range r.Snapshots {
			named := u.Name == s.Snapshot && s.Snapshot != ""
			samePath := s.Path != "" && n.snapshotPaths[u.Name] == s.Path
			if named || samePath {
				v.Needs = append(v.Needs, Need{Holder: r.Holder, Why: u.Why + " " + u.Name})
			}
		}
		for _, u := range r.HAClusters {
			if s.HACluster != "" && u.Name == s.HACluster {
				v.Needs = append(v.Needs, Need{Holder: r.Holder, Why: u.Why})
			}
		}
		for _, u := range r.Pending {
			if PendingStateOf(u.Name, s.Path) && !n.recorded[s.Path] {
				v.Needs = append(v.Needs, Need{Holder: r.Holder, Why: u.Why, UntilAnswered: true})
			}
		}
	}
	return v
}
