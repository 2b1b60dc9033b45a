package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A checkpoint read is the outage's only for a job whose record was at least the window old at its
// first pass; a read of a job not due counts against the operator, and so does any call beyond.
func TestATakeoversCheckpointReadIsEarnedOnlyByARecordPastItsWindow(t *testing.T) {
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	window := time.Minute
	first := map[string]time.Time{"due": start, "fresh": start, "fresh-read": start, "due-three": start, "none": start}
	recorded := map[string]time.Time{
		"due": start.Add(-61 * time.Second), "fresh": start.Add(-20 * time.Second),
		"fresh-read": start.Add(-20 * time.Second), "due-three": start.Add(-90 * time.Second),
	}
	calls := map[string]int64{"due": 2, "fresh": 1, "fresh-read": 2, "due-three": 3, "none": 2}
	reads := map[string]int64{"due": 1, "fresh": 0, "fresh-read": 1, "due-three": 1, "none": 1}
	beyond, due, notDue := earnedReads(calls, reads, recorded, first, window, 100*time.Millisecond)
	assert.Equal(t, map[string]int64{"due": 1, "fresh": 1, "fresh-read": 2, "due-three": 2, "none": 1}, beyond)
	assert.Equal(t, 3, due, "due, due-three, and none, whose first checkpoint is not recorded")
	assert.Equal(t, 1, notDue, "fresh-read")
}

func TestTheBenchWorksOutTheRecordWindowAsTheOperatorDoes(t *testing.T) {
	cfg := map[string]string{"statusPollInterval": "10s"}
	assert.Equal(t, recordWindow{window: time.Minute, bound: 90 * time.Second, interval: 10 * time.Second}, recordWindowOf(cfg, 0),
		"docs/job-lifecycle.md: 90 s with the defaults and a checkpoint every 10 s")
	assert.Equal(t, recordWindow{window: 0, bound: 20 * time.Second, interval: 10 * time.Second}, recordWindowOf(cfg, 1),
		"one retained: every poll, in status")
	assert.Equal(t, 40*time.Second, recordWindowOf(cfg, 8).window)
}
