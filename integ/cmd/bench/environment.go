package main

import (
	"bufio"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// environmentFigures is what the environment's own processes hold and spend: each component of
// the local cluster, the operator, and this process, which is the bench and the Flink simulator
// that plays every JobManager. cpuByProcess sums the whole machine's processes by name, other
// clusters' among them; these are ours alone, by process id. They are what a larger N needs of
// the machine.
type environmentFigures struct {
	Processes map[string]processFigures `json:"processes"`
	// WindowSeconds is the span the CPU seconds are over, when there is one.
	WindowSeconds float64 `json:"windowSeconds,omitempty"`
	// EtcdDBMiB is the size of etcd's database file and EtcdDataMiB of its whole data directory;
	// EtcdInMemory says that directory is under /dev/shm, where its files are memory.
	EtcdDBMiB    float64 `json:"etcdDBMiB"`
	EtcdDataMiB  float64 `json:"etcdDataMiB"`
	EtcdInMemory bool    `json:"etcdInMemory"`
	// MemoryMiB is what the environment takes of the machine's memory: every process's anonymous
	// resident memory, and etcd's data where it is in memory (etcd maps its database, so its RSS
	// counts those pages once more).
	MemoryMiB float64 `json:"memoryMiB"`
	// SimulatorConnections are the TCP connections to the simulator's port, by state (ESTABLISHED,
	// TIME_WAIT): every JobManager is one address here, where in a real cluster each has its own.
	SimulatorConnections map[string]int `json:"simulatorConnections"`
}

// processFigures is one process: resident memory (all of it, and its anonymous part), its peak,
// open file descriptors, and the CPU seconds it spent over the window.
type processFigures struct {
	PID        int     `json:"pid"`
	RSSMiB     float64 `json:"rssMiB"`
	AnonMiB    float64 `json:"anonMiB"`
	PeakMiB    float64 `json:"peakMiB"`
	FDs        int     `json:"fds"`
	CPUSeconds float64 `json:"cpuSeconds,omitempty"`
	// cpuTotal is the CPU the process spent since it started, for since.
	cpuTotal float64
}

// benchProcess names this process among the environment's.
const benchProcess = "bench+flinksim"

// sampleEnvironment reads every process of the environment from /proc, and etcd's data.
func (b *bench) sampleEnvironment() environmentFigures {
	pids := b.env.Cluster.PIDs()
	if pid := b.env.OperatorPID(); pid > 0 {
		pids["operator"] = pid
	}
	pids[benchProcess] = os.Getpid()
	e := environmentFigures{Processes: map[string]processFigures{}}
	for name, pid := range pids {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		p := processFigures{PID: pid, RSSMiB: procStatusMiB(string(status), "VmRSS"),
			AnonMiB: procStatusMiB(string(status), "RssAnon"), PeakMiB: procStatusMiB(string(status), "VmHWM")}
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			_, p.cpuTotal, _ = parseProcStat(string(stat))
		}
		if fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
			p.FDs = len(fds)
		}
		e.Processes[name] = p
		e.MemoryMiB += p.AnonMiB
	}
	dir := b.env.Cluster.EtcdDataDir()
	if info, err := os.Stat(filepath.Join(dir, "member", "snap", "db")); err == nil {
		e.EtcdDBMiB = float64(info.Size()) / (1 << 20)
	}
	e.EtcdDataMiB = duMiB(dir)
	if strings.HasPrefix(dir, "/dev/shm/") {
		e.EtcdInMemory = true
		e.MemoryMiB += e.EtcdDataMiB
	}
	if u, err := url.Parse(b.env.FlinkURL); err == nil {
		if port, err := strconv.Atoi(u.Port()); err == nil {
			e.SimulatorConnections = connectionsTo(port)
		}
	}
	return e
}

// since is e with the CPU each process spent since before, a sample taken earlier.
func (e environmentFigures) since(before environmentFigures) environmentFigures {
	for name, p := range e.Processes {
		if q, ok := before.Processes[name]; ok && q.PID == p.PID {
			p.CPUSeconds = p.cpuTotal - q.cpuTotal
			e.Processes[name] = p
		}
	}
	return e
}

// over records the window the CPU seconds were spent over.
func (e environmentFigures) over(d time.Duration) environmentFigures {
	e.WindowSeconds = d.Seconds()
	return e
}

// cpuPerHour is the CPU seconds the named process spent per hour of the window, 0 without one.
func (e environmentFigures) cpuPerHour(name string) float64 {
	if e.WindowSeconds <= 0 {
		return 0
	}
	return e.Processes[name].CPUSeconds * 3600 / e.WindowSeconds
}

// String lists the processes by resident memory, largest first, for the log and the report.
func (e environmentFigures) String() string {
	names := make([]string, 0, len(e.Processes))
	for n := range e.Processes {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return e.Processes[names[i]].RSSMiB > e.Processes[names[j]].RSSMiB })
	var parts []string
	for _, n := range names {
		p := e.Processes[n]
		part := fmt.Sprintf("%s %.0f MiB (anon %.0f, peak %.0f, %d fds", n, p.RSSMiB, p.AnonMiB, p.PeakMiB, p.FDs)
		if p.CPUSeconds > 0 {
			part += fmt.Sprintf(", %.1f CPU s", p.CPUSeconds)
			if e.WindowSeconds > 0 {
				part += fmt.Sprintf(" = %.2f cores", p.CPUSeconds/e.WindowSeconds)
			}
		}
		parts = append(parts, part+")")
	}
	where := "on disk"
	if e.EtcdInMemory {
		where = "in memory"
	}
	return fmt.Sprintf("%s; etcd data %.0f MiB %s (db %.0f MiB); memory in all %.0f MiB; connections to the simulator %v",
		strings.Join(parts, ", "), e.EtcdDataMiB, where, e.EtcdDBMiB, e.MemoryMiB, e.SimulatorConnections)
}

// duMiB is the size of the files under dir.
func duMiB(dir string) float64 {
	var total int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				total += info.Size()
			}
		}
		return nil
	})
	return float64(total) / (1 << 20)
}

// tcpStates names the states of /proc/net/tcp that matter here.
var tcpStates = map[string]string{"01": "ESTABLISHED", "06": "TIME_WAIT", "08": "CLOSE_WAIT"}

// connectionsTo counts the machine's TCP connections whose remote end is the loopback port, by
// state: the operator's connections to the simulator. Connections over a client's idle limit are
// closed after each call, and each leaves a socket in TIME_WAIT for a minute.
func connectionsTo(port int) map[string]int {
	out := map[string]int{}
	want := fmt.Sprintf(":%04X", port)
	for _, path := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		s := bufio.NewScanner(f)
		for s.Scan() {
			fields := strings.Fields(s.Text())
			// sl local_address rem_address st ...
			if len(fields) < 4 || !strings.HasSuffix(fields[2], want) {
				continue
			}
			if state, ok := tcpStates[fields[3]]; ok {
				out[state]++
			}
		}
		f.Close()
	}
	return out
}
