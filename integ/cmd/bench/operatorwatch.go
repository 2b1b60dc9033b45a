package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// operatorWatch follows the operator process through the soak: its peak resident memory, and every
// time it ended on its own (an OOM kill, a panic, an exit), after which it starts it again as the
// operator's Deployment would, so that the soak goes on and counts the restart.
type operatorWatch struct {
	b     *bench
	every time.Duration

	mu      sync.Mutex
	peakMiB float64
	// hwm is whether the kernel's high-water mark (VmHWM) could be reset for this process, so
	// that the peak is exact; otherwise it is VmRSS sampled every `every`.
	hwm   bool
	exits []operatorExit

	stop func()
	done chan struct{}
}

// operatorExit is one end of the operator process that the bench did not cause.
type operatorExit struct {
	AtSeconds float64 `json:"atSeconds"`
	Status    string  `json:"status"`
	// LogTail is the end of the process's log: what it said before it went.
	LogTail []string `json:"logTail"`
	// Restart is why starting it again failed, if it did.
	Restart string `json:"restartError,omitempty"`
}

// watchOperator starts following the operator; call close to stop.
func (b *bench) watchOperator(ctx context.Context) *operatorWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &operatorWatch{b: b, every: 200 * time.Millisecond, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(w.every)
		defer tick.Stop()
		for {
			w.sample(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

func (w *operatorWatch) close() {
	w.stop()
	<-w.done
}

func (w *operatorWatch) sample(ctx context.Context) {
	if status := w.b.env.OperatorExit(); status != "" {
		w.restart(ctx, status)
		return
	}
	w.notePeak()
}

// notePeak raises the peak to what the operator's process uses now.
func (w *operatorWatch) notePeak() {
	hwm, rss := procMemoryMiB(w.b.env.OperatorPID())
	w.mu.Lock()
	defer w.mu.Unlock()
	w.peakMiB = max(w.peakMiB, rss)
	if w.hwm {
		w.peakMiB = max(w.peakMiB, hwm)
	}
}

// restart records an exit and starts the operator again.
func (w *operatorWatch) restart(ctx context.Context, status string) {
	exit := operatorExit{AtSeconds: time.Since(w.b.began).Seconds(), Status: status, LogTail: lastLines(w.b.env.OperatorLog(), 30)}
	w.b.logf("(e) the operator ended on its own (%s); starting it again", status)
	// KillOperator of an ended process only forgets it, so that it can be started again.
	w.b.env.KillOperator()
	err := w.b.env.StartOperator()
	if err == nil {
		var addr string
		if addr, err = w.b.env.MetricsAddress(ctx); err == nil {
			w.b.setMetricsAddress(addr)
		}
	}
	if err != nil {
		exit.Restart = err.Error()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.exits = append(w.exits, exit)
	// The new process starts its own high-water mark, from nothing.
}

// resetPeak starts the peak anew: the kernel's high-water mark is reset (clear_refs 5, Linux 4.0+)
// when this process may, so that the peak of what follows is exact.
func (w *operatorWatch) resetPeak() {
	pid := w.b.env.OperatorPID()
	err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
	_, rss := procMemoryMiB(pid)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.hwm = err == nil && pid > 0
	w.peakMiB = rss
}

// peak is the highest resident memory since resetPeak, over every operator process, and how it
// was measured.
func (w *operatorWatch) peak() (float64, string) {
	w.notePeak()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.hwm {
		return w.peakMiB, "VmHWM (the kernel's high-water mark, reset at the start)"
	}
	return w.peakMiB, fmt.Sprintf("VmRSS sampled every %s (VmHWM could not be reset)", w.every)
}

func (w *operatorWatch) exited() []operatorExit {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]operatorExit(nil), w.exits...)
}

// procMemoryMiB is a process's VmHWM and VmRSS in MiB; zeros when it cannot be read.
func procMemoryMiB(pid int) (hwm, rss float64) {
	if pid <= 0 {
		return 0, 0
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	return procStatusMiB(string(raw), "VmHWM"), procStatusMiB(string(raw), "VmRSS")
}

// procStatusMiB reads one "Name:   1234 kB" line of /proc/PID/status, in MiB; 0 when absent.
func procStatusMiB(status, name string) float64 {
	for _, line := range strings.Split(status, "\n") {
		rest, ok := strings.CutPrefix(line, name+":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
		if err != nil {
			return 0
		}
		return kb / 1024
	}
	return 0
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[max(0, len(lines)-n):]
}
