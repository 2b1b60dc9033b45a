package flinksim

import (
	"sync/atomic"
	"time"
)

// servedBounds are the upper bounds, in seconds, of the served-time histogram: the operator's
// Flink call histogram's up to a second, so that a benchmark can set the two side by side.
var servedBounds = []float64{.005, .01, .025, .05, .1, .25, .5, 1}

// servedTimes counts the REST calls a Fleet served by how long its handler took, from the request
// read to the answer written. A call the operator timed much longer than this waited elsewhere:
// for a core on either side, or in the network.
type servedTimes struct {
	buckets [9]atomic.Uint64 // per bound of servedBounds, and one past the last
}

func (s *servedTimes) observe(took time.Duration) {
	secs := took.Seconds()
	i := 0
	for i < len(servedBounds) && secs > servedBounds[i] {
		i++
	}
	s.buckets[i].Add(1)
}

// ServedTimes is a cumulative histogram of the time the Fleet's handlers took to answer.
type ServedTimes struct {
	// Bounds are the buckets' upper bounds in seconds; Cumulative[i] counts the calls answered
	// within Bounds[i], and Count all of them.
	Bounds     []float64
	Cumulative []uint64
	Count      uint64
}

// ServedTimes is how long the Fleet's handlers have taken to answer, so far.
func (f *Fleet) ServedTimes() ServedTimes {
	out := ServedTimes{Bounds: servedBounds, Cumulative: make([]uint64, len(servedBounds))}
	for i := range f.served.buckets {
		out.Count += f.served.buckets[i].Load()
		if i < len(servedBounds) {
			out.Cumulative[i] = out.Count
		}
	}
	return out
}
