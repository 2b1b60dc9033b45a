package fsm

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A pod that goes back and forth (a crash loop's Ready, a pod replaced) is no progress: only more
// steps than the phase has seen count, and a new visit of the phase starts again.
func TestOnlyAStepBeyondTheMostSeenIsProgress(t *testing.T) {
	var m ProgressMemory
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	assert.Equal(t, t0, m.Since("a", t0, at(10), 3), "first sight: the phase's start")
	assert.Equal(t, at(20), m.Since("a", t0, at(20), 4))
	assert.Equal(t, at(20), m.Since("a", t0, at(30), 3), "a step lost")
	assert.Equal(t, at(20), m.Since("a", t0, at(40), 4), "and taken again")
	assert.Equal(t, at(50), m.Since("a", t0, at(50), 5))
	assert.Equal(t, at(60), m.Since("a", at(60), at(60), 5), "a new visit of the phase")
	assert.Equal(t, at(60), m.Since("a", at(60).Add(300*time.Millisecond), at(70), 5), "status keeps the start to the second")
	m.Forget("a")
	assert.Equal(t, at(60), m.Since("a", at(60), at(80), 6), "forgotten: from the phase's start")
}
