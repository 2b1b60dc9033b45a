// Package heapwatch measures what a piece of code holds on the heap, for tests that bound the
// memory one input may cost (an answer, a jar): it samples the heap's live objects while the code
// runs and keeps the highest value.
package heapwatch

import (
	"runtime"
	runtimemetrics "runtime/metrics"
	"sync/atomic"
	"time"
)

// Watch samples the heap until stopped and keeps the highest value it saw.
type Watch struct {
	// Base is the heap when the watch began, after a collection.
	Base uint64
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

// Start collects garbage first, so what the watch sees is what the code under watch holds.
func Start() *Watch {
	runtime.GC()
	w := &Watch{stop: make(chan struct{}), done: make(chan struct{})}
	sample := []runtimemetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() {
		runtimemetrics.Read(sample)
		if v := sample[0].Value.Uint64(); v > w.peak.Load() {
			w.peak.Store(v)
		}
	}
	read()
	w.Base = w.peak.Load()
	go func() {
		defer close(w.done)
		tick := time.NewTicker(250 * time.Microsecond)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				read()
				return
			case <-tick.C:
				read()
			}
		}
	}()
	return w
}

// End stops the watch and returns the peak.
func (w *Watch) End() uint64 {
	close(w.stop)
	<-w.done
	return w.peak.Load()
}

// Growth stops the watch and returns how far the heap rose above its base.
func (w *Watch) Growth() uint64 {
	peak := w.End()
	return peak - min(peak, w.Base)
}
