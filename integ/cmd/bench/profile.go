package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"
)

// maxProfile bounds the CPU profile of (c): a minute of the steady state is enough samples to see
// where the operator's time goes, and pprof refuses a profile longer than the server's write timeout.
const maxProfile = time.Minute

// traceLength is the execution trace taken after the profile: at a thousand passes a second, five
// seconds already hold thousands of them.
const traceLength = 5 * time.Second

// allocsLength is how long the operator's allocations are sampled after the trace.
const allocsLength = 30 * time.Second

// profileOwnCPU starts this process's CPU profile into path and returns what stops it; a profile
// that cannot start is logged and skipped.
func (b *bench) profileOwnCPU(path string) (stop func()) {
	f, err := os.Create(path)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		b.logf("(c) no CPU profile of the simulator: %v", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// profileCPU, when the operator serves pprof (-set profiling=true), records its CPU profile for
// the first minute of window into the run's directory, and beside it this process's own (the
// simulator's JobManagers answer in it, so a slow Flink call shows there); then a short execution
// trace, half a minute of the operator's allocations and its live heap. It sends the operator's
// profile's path (or "" when profiling is off or the profile could not be taken) once it is done,
// and returns at once.
func (b *bench) profileCPU(ctx context.Context, window time.Duration) <-chan string {
	done := make(chan string, 1)
	if !b.profiling {
		done <- ""
		return done
	}
	length := min(window, maxProfile)
	go func() {
		stopOwn := b.profileOwnCPU(filepath.Join(b.dir, b.profileName("simulator-cpu.pprof")))
		path, err := b.fetchProfile(ctx, fmt.Sprintf("profile?seconds=%d", int(length.Seconds())), b.profileName("operator-cpu.pprof"), length)
		stopOwn()
		if err != nil {
			b.logf("(c) no CPU profile: %v", err)
		}
		// Then a few seconds of execution trace, which shows what a profile cannot: how long
		// runnable goroutines waited for a core, and what the collector stopped or slowed.
		if window >= length+traceLength {
			if _, err := b.fetchProfile(ctx, fmt.Sprintf("trace?seconds=%d", int(traceLength.Seconds())), b.profileName("operator-trace.out"), traceLength); err != nil {
				b.logf("(c) no execution trace: %v", err)
			}
		}
		if window >= length+traceLength+allocsLength {
			if _, err := b.fetchProfile(ctx, fmt.Sprintf("allocs?seconds=%d", int(allocsLength.Seconds())), b.profileName("operator-allocs.pprof"), allocsLength); err != nil {
				b.logf("(c) no allocation profile: %v", err)
			}
		}
		// And what the heap held at the last collection (no collection is forced): what the
		// collector marks in each cycle, so what its mark phases' length follows.
		if _, err := b.fetchProfile(ctx, "heap", b.profileName("operator-heap.pprof"), 0); err != nil {
			b.logf("(c) no heap profile: %v", err)
		}
		done <- path
	}()
	return done
}

// fetchProfile saves one of the operator's /debug/pprof/ answers as name in the run's directory.
func (b *bench) fetchProfile(ctx context.Context, query, name string, length time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, length+30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+b.metricsAddress()+"/debug/pprof/"+query, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("/debug/pprof/%s answered %s", query, resp.Status)
	}
	path := filepath.Join(b.dir, name)
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

// profileName is name in the run's directory as the window being measured has it: as it is for
// (c), and with the variant's name before the extension during a -steady-again window
// ("operator-cpu-gogc100.pprof"), so that no window overwrites another's files.
func (b *bench) profileName(name string) string {
	if b.profileTag == "" {
		return name
	}
	ext := filepath.Ext(name)
	return strings.TrimSuffix(name, ext) + "-" + b.profileTag + ext
}
