package realflink

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one JVM of a cluster: a JobManager or a TaskManager. It runs in a process group of its
// own, so that stopping it reaches whatever it started, and dies with the test binary (Pdeathsig)
// when that is killed before its cleanup runs.
type process struct {
	name string
	cmd  *exec.Cmd
	// log is Flink's log file (log.file); out holds the JVM's stdout and stderr.
	log, out string

	done    chan struct{}
	mu      sync.Mutex
	exitErr error
}

func startProcess(name string, cmd *exec.Cmd, logFile, outFile string) (*process, error) {
	out, err := os.Create(outFile)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logFile, out: outFile, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		out.Close()
		p.mu.Lock()
		p.exitErr = err
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return true, p.exitErr
	default:
		return false, nil
	}
}

// stop asks the process group to end (SIGTERM, on which Flink shuts down in order) and kills it
// after grace. A zero grace kills at once, as a node failure would.
func (p *process) stop(grace time.Duration) {
	if ended, _ := p.exited(); ended {
		return
	}
	pgid := p.cmd.Process.Pid
	if grace > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
		}
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
}

// memory reads the process's resident set now and at its peak (VmRSS and VmHWM), in bytes; zeros
// once it has ended.
func (p *process) memory() (rss, peak int64) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		for _, field := range []struct {
			name string
			to   *int64
		}{{"VmRSS:", &rss}, {"VmHWM:", &peak}} {
			if rest, ok := strings.CutPrefix(line, field.name); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
				*field.to = kb * 1024
			}
		}
	}
	return rss, peak
}

// tail is the last n lines of the process's log and of its output, for a failure report.
func (p *process) tail(n int) string {
	var b strings.Builder
	for _, f := range []string{p.log, p.out} {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		fmt.Fprintf(&b, "--- %s: last %d lines of %s\n%s\n", p.name, len(lines), f, strings.Join(lines, "\n"))
	}
	return b.String()
}
