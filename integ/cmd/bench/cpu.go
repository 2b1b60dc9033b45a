package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, which Linux fixes at 100 on every architecture Go builds for here.
const clockTicks = 100

// cpuByProcess is the CPU time (user and system, in seconds) every process on the machine has
// used so far, by command name and process id. The local cluster runs as processes of this machine, so the
// difference over a run shows who spent the two cores: the API server, etcd, the controllers, kwok,
// the Flink simulator or the operator.
func cpuByProcess() map[string]float64 {
	out := map[string]float64{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended meanwhile
		}
		name, seconds, ok := parseProcStat(string(raw))
		if ok {
			// Keyed by process as well as name: a process that ends between two readings (another
			// run's API server, a compiler) must not take its CPU from a live one of the same name.
			out[name+"\x00"+filepath.Base(filepath.Dir(path))] += seconds
		}
	}
	return out
}

// parseProcStat reads the command name and utime+stime of one /proc/PID/stat line. The name is in
// parentheses and may itself hold spaces and parentheses, so the fields are counted from the last
// closing one.
func parseProcStat(line string) (name string, seconds float64, ok bool) {
	open, closing := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || closing < open {
		return "", 0, false
	}
	name = line[open+1 : closing]
	fields := strings.Fields(line[closing+1:])
	// After the name: state(0) ppid(1) ... utime(11) stime(12).
	if len(fields) < 13 {
		return "", 0, false
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		return "", 0, false
	}
	return name, (utime + stime) / clockTicks, true
}

// cpuSpent is after minus before, by command name, leaving out names that spent under 0.1 s. A
// process that started meanwhile counts from zero; one that ended counts for nothing.
func cpuSpent(before, after map[string]float64) map[string]float64 {
	byName := map[string]float64{}
	for key, s := range after {
		name, _, _ := strings.Cut(key, "\x00")
		byName[name] += s - before[key]
	}
	spent := map[string]float64{}
	for name, d := range byName {
		if d >= 0.1 {
			spent[name] = d
		}
	}
	return spent
}

// formatCPU lists the busiest first, with the total.
func formatCPU(spent map[string]float64) string {
	names := make([]string, 0, len(spent))
	total := 0.0
	for n, s := range spent {
		names = append(names, n)
		total += s
	}
	sort.Slice(names, func(i, j int) bool { return spent[names[i]] > spent[names[j]] })
	parts := []string{fmt.Sprintf("total %.1f s", total)}
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %.1f", n, spent[n]))
	}
	return strings.Join(parts, ", ")
}
