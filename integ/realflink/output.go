package realflink

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// JobOutput is what one job of integ/flinkjob wrote (its README says what the files hold and what
// they prove): every counted record, and the position each of its snapshots holds.
type JobOutput struct {
	JobID string
	// Lines are every "n key count" line of every subtask and attempt.
	Lines []OutputLine
	// Attempts are the task attempts that wrote (0 unless a task restarted).
	Attempts map[int]bool
	// Highest is, per checkpoint or savepoint id, the highest number any subtask had seen when it
	// was taken: the job's source had emitted exactly 0..Highest before its barrier.
	Highest map[int64]int64
}

// OutputLine is one counted record.
type OutputLine struct {
	N     int64
	Key   int64
	Count int64
	// File is where it was read, for messages.
	File string
}

// ReadJobOutput reads what the job jobID wrote under out (its --out). A last line without its
// newline is one being written, and is left out.
func ReadJobOutput(out, jobID string) (*JobOutput, error) {
	dir := filepath.Join(out, jobID)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the output of job %s: %w", jobID, err)
	}
	o := &JobOutput{JobID: jobID, Attempts: map[int]bool{}, Highest: map[int64]int64{}}
	for _, e := range entries {
		name := e.Name()
		var kind string
		var subtask, attempt int
		if _, err := fmt.Sscanf(strings.ReplaceAll(strings.TrimSuffix(name, ".txt"), "-", " "), "%s %d %d", &kind, &subtask, &attempt); err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		text := string(raw)
		if i := strings.LastIndexByte(text, '\n'); i >= 0 {
			text = text[:i]
		} else {
			text = ""
		}
		for i, line := range strings.Split(text, "\n") {
			if line == "" {
				continue
			}
			f := strings.Fields(line)
			nums := make([]int64, len(f))
			for j := range f {
				if nums[j], err = strconv.ParseInt(f[j], 10, 64); err != nil {
					return nil, fmt.Errorf("%s line %d: %q: %w", name, i+1, line, err)
				}
			}
			switch {
			case kind == "out" && len(nums) == 3:
				o.Attempts[attempt] = true
				o.Lines = append(o.Lines, OutputLine{N: nums[0], Key: nums[1], Count: nums[2], File: name})
			case kind == "snap" && len(nums) == 2:
				if h, seen := o.Highest[nums[0]]; !seen || nums[1] > h {
					o.Highest[nums[0]] = nums[1]
				}
			default:
				return nil, fmt.Errorf("%s line %d: unexpected %q", name, i+1, line)
			}
		}
	}
	return o, nil
}

// ResumePosition is the first number a job restored from snapshot id must emit.
func (o *JobOutput) ResumePosition(id int64) (int64, bool) {
	h, ok := o.Highest[id]
	return h + 1, ok
}

// CheckCounts checks that every record's count is n/keys+1: the counters' state and the source's
// position were saved and restored together (no reset, no record counted twice).
func (o *JobOutput) CheckCounts(keys int64) error {
	var bad []string
	for _, l := range o.Lines {
		if l.Key != l.N%keys || l.Count != l.N/keys+1 {
			bad = append(bad, fmt.Sprintf("%s: n=%d key=%d count=%d, want key %d count %d", l.File, l.N, l.Key, l.Count, l.N%keys, l.N/keys+1))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("job %s: %d records counted wrong, first: %s", o.JobID, len(bad), strings.Join(bad[:min(5, len(bad))], "; "))
	}
	return nil
}

// CheckExactlyFrom checks that the job counted every number of [from, to) exactly once and none
// below from: it went on exactly where its snapshot was, lost nothing up to to, and repeated
// nothing (within one attempt: a restarted task replays by design, so more than one attempt is an
// error here).
func (o *JobOutput) CheckExactlyFrom(from, to int64) error {
	if len(o.Attempts) > 1 || (len(o.Attempts) == 1 && !o.Attempts[0]) {
		return fmt.Errorf("job %s: tasks restarted (attempts %v), so its output replays by design", o.JobID, keys(o.Attempts))
	}
	seen := map[int64]int{}
	lowest := int64(-1)
	for _, l := range o.Lines {
		seen[l.N]++
		if lowest < 0 || l.N < lowest {
			lowest = l.N
		}
	}
	if lowest != from {
		return fmt.Errorf("job %s: its first number is %d, want exactly %d", o.JobID, lowest, from)
	}
	var missing, twice []int64
	for n := from; n < to; n++ {
		switch seen[n] {
		case 0:
			missing = append(missing, n)
		case 1:
		default:
			twice = append(twice, n)
		}
	}
	for n, k := range seen {
		if n >= to && k > 1 {
			twice = append(twice, n)
		}
	}
	if len(missing) > 0 || len(twice) > 0 {
		sort.Slice(twice, func(i, j int) bool { return twice[i] < twice[j] })
		return fmt.Errorf("job %s over [%d,%d): %d numbers missing (first %v), %d counted twice (first %v)",
			o.JobID, from, to, len(missing), missing[:min(5, len(missing))], len(twice), twice[:min(5, len(twice))])
	}
	return nil
}

// Highest number the job counted, or -1.
func (o *JobOutput) HighestCounted() int64 {
	h := int64(-1)
	for _, l := range o.Lines {
		h = max(h, l.N)
	}
	return h
}

func keys(m map[int]bool) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
