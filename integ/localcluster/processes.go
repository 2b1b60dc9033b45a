//go:build linux

package localcluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one running component binary.
type process struct {
	name     string
	tier     int // stop order: higher tiers stop first
	cmd      *exec.Cmd
	logPath  string
	logStart int64 // offset in logPath where this run's output starts
	done     chan struct{}
	waitErr  error // valid once done is closed
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitError describes how the process ended, with the end of its log.
func (p *process) exitError() error {
	return fmt.Errorf("%s (pid %d) exited: %v\n--- last lines of %s ---\n%s", p.name, p.pid(), p.waitErr, p.logPath, p.logTail(40))
}

// logTail returns the last n lines this run wrote.
func (p *process) logTail(n int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return "(log unreadable: " + err.Error() + ")"
	}
	if p.logStart <= int64(len(data)) {
		data = data[p.logStart:]
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (p *process) logContains(s string) bool {
	data, err := os.ReadFile(p.logPath)
	if err != nil || p.logStart > int64(len(data)) {
		return false
	}
	return bytes.Contains(data[p.logStart:], []byte(s))
}

// spawner starts children from one goroutine locked to its OS thread. Pdeathsig fires when the
// thread that forked a child exits, not the process; Go may retire threads, so without a thread of
// our own a child could be killed while the test still runs. When the spawner is closed the thread
// exits, and Pdeathsig then reaps anything Stop somehow missed.
type spawner struct {
	mu     sync.Mutex
	reqs   chan func()
	closed bool
}

func newSpawner() *spawner {
	s := &spawner{reqs: make(chan func())}
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine
		for f := range s.reqs {
			f()
		}
	}()
	return s
}

func (s *spawner) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.reqs)
	}
}

// start launches bin in its own process group with output appended to logPath.
func (s *spawner) start(name string, tier int, bin string, args, env []string, logPath string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	offset, _ := logFile.Seek(0, io.SeekEnd)
	fmt.Fprintf(logFile, "=== %s %s %s\n", time.Now().Format(time.RFC3339), bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = logFile.Close()
		return nil, errors.New("cluster is stopped")
	}
	errc := make(chan error, 1)
	s.reqs <- func() { errc <- cmd.Start() }
	s.mu.Unlock()
	if err := <-errc; err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, tier: tier, cmd: cmd, logPath: logPath, logStart: offset, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// stopAll stops processes tier by tier, highest first: clients before kube-apiserver before etcd.
// Terminating all at once makes etcd and kube-apiserver each wait for the other's connections to
// drain and costs the whole grace period; in order the lot exits in about a second.
func stopAll(procs []*process, grace time.Duration, logf func(string, ...any)) error {
	tiers := map[int][]*process{}
	top := 0
	for _, p := range procs {
		tiers[p.tier] = append(tiers[p.tier], p)
		top = max(top, p.tier)
	}
	var errs []error
	for tier := top; tier >= 0; tier-- {
		errs = append(errs, stopTogether(tiers[tier], grace, logf))
	}
	return errors.Join(errs...)
}

// stopTogether sends SIGTERM to each process group, then SIGKILL to those left after grace.
func stopTogether(procs []*process, grace time.Duration, logf func(string, ...any)) error {
	for _, p := range procs {
		if !p.exited() {
			_ = syscall.Kill(-p.pid(), syscall.SIGTERM)
		}
	}
	deadline := time.After(grace)
	var left []*process
	for _, p := range procs {
		select {
		case <-p.done:
		case <-deadline:
			deadline = closedTimer // the grace period is shared, not per process
		}
		if !p.exited() {
			left = append(left, p)
		}
	}
	var errs []error
	for _, p := range left {
		logf("%s (pid %d) still running %s after SIGTERM; killing it", p.name, p.pid(), grace)
		_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			errs = append(errs, fmt.Errorf("%s (pid %d) survived SIGKILL", p.name, p.pid()))
		}
	}
	return errors.Join(errs...)
}

var closedTimer = func() <-chan time.Time {
	c := make(chan time.Time)
	close(c)
	return c
}()
