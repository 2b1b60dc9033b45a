package realflink

import (
	"fmt"
	"sync"
	"time"
)

// Memory is what a cluster's JVMs held, in bytes.
type Memory struct {
	// Now is the resident set of all live processes together.
	Now int64
	// PeakTotal is the highest Now seen by sampling every half second.
	PeakTotal int64
	// PeakPerProcess is each process's own peak (VmHWM) as last read.
	PeakPerProcess map[string]int64
}

func (m Memory) String() string {
	s := fmt.Sprintf("RSS now %s, peak %s (sampled)", mib(m.Now), mib(m.PeakTotal))
	for name, peak := range m.PeakPerProcess {
		s += fmt.Sprintf(", %s peak %s", name, mib(peak))
	}
	return s
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// Memory reports the cluster's memory so far.
func (c *Cluster) Memory() Memory {
	c.stats.sample()
	c.stats.mu.Lock()
	defer c.stats.mu.Unlock()
	out := Memory{Now: c.stats.now, PeakTotal: c.stats.peakTotal, PeakPerProcess: map[string]int64{}}
	for k, v := range c.stats.peak {
		out.PeakPerProcess[k] = v
	}
	return out
}

// memoryStats samples the processes' resident sets while the cluster runs.
type memoryStats struct {
	mu        sync.Mutex
	list      func() []*process
	now       int64
	peakTotal int64
	peak      map[string]int64
	quit      chan struct{}
	done      chan struct{}
}

func (s *memoryStats) start(list func() []*process) {
	s.list, s.peak = list, map[string]int64{}
	s.quit, s.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-s.quit:
				return
			case <-t.C:
			}
		}
	}()
}

func (s *memoryStats) sample() {
	if s.list == nil {
		return
	}
	var total int64
	peaks := map[string]int64{}
	for _, p := range s.list() {
		if p == nil {
			continue
		}
		rss, peak := p.memory()
		total += rss
		if peak > 0 {
			peaks[p.name] = peak
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = total
	s.peakTotal = max(s.peakTotal, total)
	for k, v := range peaks {
		s.peak[k] = max(s.peak[k], v)
	}
}

func (s *memoryStats) stop() {
	if s.quit == nil {
		return
	}
	select {
	case <-s.quit:
	default:
		close(s.quit)
		<-s.done
	}
}
