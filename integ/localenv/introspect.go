package localenv

import (
	"context"
	"fmt"
	"regexp"
	"time"
)

// OperatorPID is the process id of the running operator, 0 when none runs. A benchmark reads the
// operator's memory from /proc with it.
func (e *Env) OperatorPID() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.operator == nil || e.operator.Process == nil {
		return 0
	}
	return e.operator.Process.Pid
}

// The operator logs the address its /metrics server bound once it is up; the environment asks for
// port 0, so the log is the only place the port is known.
var metricsLine = regexp.MustCompile(`flinkfsm operator started.*metrics="?([0-9.:\[\]a-f]+)"?`)

// MetricsAddress waits until the running operator has logged the address of its /metrics server
// and returns it (host:port).
func (e *Env) MetricsAddress(ctx context.Context) (string, error) {
	for {
		e.mu.Lock()
		running, from := e.operator != nil, e.logStart
		e.mu.Unlock()
		if !running {
			return "", fmt.Errorf("no operator is running")
		}
		// The log keeps the output of every start; only the running process's counts.
		if log := e.OperatorLog(); int64(len(log)) > from {
			if m := metricsLine.FindStringSubmatch(log[from:]); m != nil {
				return m[1], nil
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("the operator never logged its metrics address: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// OperatorExit says how the operator process started last ended on its own: its wait status
// ("exit status 2", "signal: killed") once it has exited, "" while it runs and after KillOperator.
// A soak counts these as the operator's restarts: a Deployment would start it again.
func (e *Env) OperatorExit() string {
	e.mu.Lock()
	cmd, exited := e.operator, e.exited
	e.mu.Unlock()
	if cmd == nil {
		return ""
	}
	select {
	case <-exited:
		// Wait has returned, so ProcessState is set; it stays nil only when Wait itself failed.
		if cmd.ProcessState == nil {
			return "ended (no wait status)"
		}
		return cmd.ProcessState.String()
	default:
		return ""
	}
}
