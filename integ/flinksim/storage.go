package flinksim

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Snapshot is a savepoint or retained checkpoint directory that exists in Storage.
type Snapshot struct {
	Path         string
	JobID        string
	CheckpointID int64
	Savepoint    bool
	// Format is the format a savepoint was written in, as the trigger asked for it: CANONICAL (the
	// default, and the only format before Flink 1.15) or NATIVE; "" for a checkpoint.
	Format    string
	CreatedAt time.Time
}

// Storage stands in for the durable file system (S3, a PVC) behind
// state.savepoints.dir and state.checkpoints.dir. It outlives JobManagers: a
// crashed or replaced cluster's savepoints stay restorable until deleted. It
// also holds the HA data of clusters that run with Flink HA.
type Storage struct {
	mu      sync.Mutex
	items   map[string]Snapshot
	ha      map[string]*haStore // by HA scope and cluster id
	syncers []func()
	// changes counts the snapshots put and removed.
	changes uint64
}

// NewStorage returns an empty Storage.
func NewStorage() *Storage {
	return &Storage{items: map[string]Snapshot{}}
}

// storageKey accepts the spellings Flink accepts for one snapshot: with or
// without "file:", a trailing slash, or the "/_metadata" file inside it.
func storageKey(path string) string {
	p := strings.TrimSpace(path)
	p = strings.TrimRight(p, "/")
	p = strings.TrimSuffix(p, "/_metadata")
	return normalizePath(p)
}

// attach registers a JobManager's lazy evaluation, so that checkpoints that
// are due (or discarded) by now are visible to a test reading Storage.
func (s *Storage) attach(sync func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.syncers = append(s.syncers, sync)
}

func (s *Storage) catchUp() {
	s.mu.Lock()
	syncers := append([]func(){}, s.syncers...)
	s.mu.Unlock()
	for _, f := range syncers {
		f()
	}
}

// Exists reports whether a snapshot lives at path.
func (s *Storage) Exists(path string) bool {
	_, ok := s.Get(path)
	return ok
}

// Get returns the snapshot at path.
func (s *Storage) Get(path string) (Snapshot, bool) {
	s.catchUp()
	return s.get(path)
}

// get reads without catching up; JobManagers call it while holding their lock.
func (s *Storage) get(path string) (Snapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap, ok := s.items[storageKey(path)]
	return snap, ok
}

// checkpointsOf are the checkpoints (not savepoints) the jobs took that are still in Storage,
// oldest first.
func (s *Storage) checkpointsOf(jobIDs ...string) []Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Snapshot
	for _, snap := range s.items {
		if !snap.Savepoint && snap.JobID != "" && slices.Contains(jobIDs, snap.JobID) {
			out = append(out, snap)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].JobID != out[j].JobID {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].CheckpointID < out[j].CheckpointID
	})
	return out
}

// Delete removes the snapshot at path, as a lost or garbage-collected savepoint.
func (s *Storage) Delete(path string) {
	s.catchUp()
	s.remove(path)
}

// PutBack writes a snapshot again at its path, as a user who copies a lost directory back.
func (s *Storage) PutBack(snap Snapshot) {
	s.catchUp()
	s.put(snap)
}

func (s *Storage) remove(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.items, storageKey(path))
	s.changes++
}

// Changes counts the snapshots written and deleted so far, the JobManagers caught up with the
// clock first: a caller that watches Storage reads Snapshots again only when it moved.
func (s *Storage) Changes() uint64 {
	s.catchUp()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changes
}

// Snapshots lists every existing snapshot, oldest first.
func (s *Storage) Snapshots() []Snapshot {
	s.catchUp()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Snapshot, 0, len(s.items))
	for _, snap := range s.items {
		out = append(out, snap)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].Path < out[j].Path
	})
	return out
}

func (s *Storage) put(snap Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items[storageKey(snap.Path)] = snap
	s.changes++
}
