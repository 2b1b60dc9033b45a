// Package idsource is where the operator and the Flink simulator draw the randomness of the ids they
// mint (job, trigger and jar ids, savepoint paths): crypto/rand, unless a test that replays a seeded
// run swaps in a reader of its own, so that everything that depends on an id (a path, an order,
// which request a fault hits) is the same in every replay.
package idsource

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"sync"
)

// Source hands out random hex strings. Its zero value reads crypto/rand.
type Source struct {
	mu sync.Mutex
	r  io.Reader
}

// Hex returns n random lowercase hex characters.
func (s *Source) Hex(n int) string {
	b := make([]byte, (n+1)/2)
	s.mu.Lock()
	r := s.r
	if r == nil {
		r = rand.Reader
	}
	_, _ = io.ReadFull(r, b)
	s.mu.Unlock()
	return hex.EncodeToString(b)[:n]
}

// Use makes the source read from r until the returned function restores the reader before.
func (s *Source) Use(r io.Reader) (restore func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	before := s.r
	s.r = r
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.r = before
	}
}
