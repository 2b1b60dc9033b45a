package flinksim

import (
	"strconv"
	"strings"
	"time"
)

// executionStates is Flink's ExecutionState enum in declaration order.
var executionStates = []string{
	"CREATED", "SCHEDULED", "DEPLOYING", "RUNNING", "FINISHED",
	"CANCELING", "CANCELED", "FAILED", "RECONCILING", "INITIALIZING",
}

// defaultVertexNames are the vertices of a job submitted without a Load.
var defaultVertexNames = []string{"Source: Custom Source", "Sink: Print to Std. Out"}

// setVertices gives a job its vertices: the Load's, or the default source and sink. Vertex ids hash
// the program (and the vertex), as Flink's are stable for an unchanged JobGraph.
func (j *job) setVertices(program string, load *loadSpec) {
	p := j.parallelism
	if load == nil {
		j.vertexIDs = []string{stableHex(program + "/source"), stableHex(program + "/sink")}
		j.vertexNames = defaultVertexNames
		j.vertexInputs = [][]int{nil, {0}}
	} else {
		j.load = load
		j.vertexNames = load.names
		j.vertexInputs = load.inputs
		for v, name := range load.names {
			j.vertexIDs = append(j.vertexIDs, stableHex(program+"/"+itoa(v)+"/"+name))
		}
	}
	overrides := parallelismOverrides(j.userConfig[ParallelismOverridesKey])
	for _, id := range j.vertexIDs {
		vp := p
		if o, ok := overrides[id]; ok {
			vp = o
		}
		j.vertexParallelism = append(j.vertexParallelism, vp)
		j.bounds = append(j.bounds, parallelismBounds{1, vp})
	}
}

// ParallelismOverridesKey is Flink's per-vertex parallelism at submission (1.17+, FLINK-29501):
// "vertexId:parallelism,..." in the job's configuration, for vertices of the job graph; ids it
// does not have are ignored.
const ParallelismOverridesKey = "pipeline.jobvertex-parallelism-overrides"

// parallelismOverrides reads a map-typed Flink option: comma-separated key:value pairs.
func parallelismOverrides(v string) map[string]int {
	out := map[string]int{}
	for _, pair := range strings.Split(v, ",") {
		id, n, ok := strings.Cut(strings.TrimSpace(pair), ":")
		if p, err := strconv.Atoi(strings.TrimSpace(n)); ok && err == nil && p > 0 {
			out[strings.TrimSpace(id)] = p
		}
	}
	return out
}

// hasGraph tells whether the job has an ExecutionGraph. Jobs still initialising
// or that failed during initialisation are sparse: no vertices.
func (j *job) hasGraph() bool {
	return j.state != stateInitializing && j.initFailure == nil
}

// subtaskStates derives the state of every subtask of vertex v from the job
// state, keeping the counters consistent with what Flink would report.
func (j *job) subtaskStates(v int) map[string]int {
	counts := map[string]int{}
	for _, s := range executionStates {
		counts[s] = 0
	}
	p := j.vertexParallelism[v]
	all := func(s string) { counts[s] = p }
	switch j.state {
	case stateCreated:
		all("CREATED")
	case stateRunning:
		if j.hasSlots {
			all("RUNNING")
		} else {
			all("SCHEDULED")
		}
	case stateRestarting, stateCanceled:
		all("CANCELED")
	case stateCancelling:
		if j.hasSlots {
			all("CANCELING")
		} else {
			all("CANCELED")
		}
	case stateFinished:
		all("FINISHED")
	case stateFailing, stateFailed:
		rest := "CANCELED"
		if j.state == stateFailing && j.hasSlots {
			rest = "CANCELING"
		}
		all(rest)
		if v == 0 {
			counts["FAILED"], counts[rest] = 1, p-1
		}
	}
	return counts
}

// aggregateState is ExecutionJobVertex's aggregate of its subtask states.
func aggregateState(counts map[string]int) string {
	total := 0
	for _, n := range counts {
		total += n
	}
	for _, s := range executionStates {
		if counts[s] == total && total > 0 {
			return s
		}
	}
	for _, s := range []string{"FAILED", "CANCELING", "CANCELED", "RECONCILING", "INITIALIZING", "RUNNING", "DEPLOYING", "SCHEDULED", "FINISHED"} {
		if counts[s] > 0 {
			if s == "FINISHED" {
				return "RUNNING"
			}
			return s
		}
	}
	return "CREATED"
}

func lowerKeys(counts map[string]int) map[string]int {
	out := make(map[string]int, len(counts)+1)
	total := 0
	for k, n := range counts {
		out[strings.ToLower(k)] = n
		total += n
	}
	out["total"] = total
	return out
}

// jobTaskCounts sums subtask states over all vertices (empty for sparse jobs).
func (j *job) jobTaskCounts() map[string]int {
	sum := map[string]int{}
	for _, s := range executionStates {
		sum[s] = 0
	}
	if !j.hasGraph() {
		return sum
	}
	for v := range j.vertexIDs {
		for s, n := range j.subtaskStates(v) {
			sum[s] += n
		}
	}
	return sum
}

func maxParallelismFor(p int) int {
	// KeyGroupRangeAssignment.computeDefaultMaxParallelism: 1.5×p rounded up to a
	// power of two, within [128, 32768].
	n := 1
	for n < p+p/2 {
		n <<= 1
	}
	return min(max(n, 128), 32768)
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return -1
	}
	return t.UnixMilli()
}

func (jm *JobManager) vertexInfos(j *job, now time.Time) []vertexInfo {
	out := []vertexInfo{}
	if !j.hasGraph() {
		return out
	}
	start := millis(j.deployedAt)
	end := int64(-1)
	if isGloballyTerminal(j.state) {
		end = j.endedAt.UnixMilli()
	}
	duration := int64(-1)
	if start >= 0 {
		duration = now.UnixMilli() - start
		if end >= 0 {
			duration = end - start
		}
	}
	for v := range j.vertexIDs {
		counts := j.subtaskStates(v)
		info := vertexInfo{
			ID: j.vertexIDs[v], Name: j.vertexNames[v], MaxParallelism: j.maxParallelism,
			Parallelism: j.vertexParallelism[v], Status: aggregateState(counts),
			StartTime: start, EndTime: end, Duration: duration,
			Tasks: countsOf(executionStates, counts),
			Metrics: vertexMetrics{ReadBytesComplete: true, WriteBytesComplete: true, ReadRecordsComplete: true,
				WriteRecordsComplete: true, AccumulatedBusyTime: rawNum(jsonDouble(0))},
		}
		if flinkAtLeast(jm.flinkVersion, 1, 20) {
			info.SlotSharingGroupID = j.slotSharingGroup
		}
		out = append(out, info)
	}
	return out
}

// plan lists the vertices last to first, as Flink's JSON plan lists a streaming job's; a source
// has no inputs. The default job's source feeds its sink FORWARD; a Load's vertices are keyed
// (HASH), so that each can run with its own parallelism.
func (jm *JobManager) plan(j *job) jobPlanBody {
	nodes := []planNode{}
	if j.hasGraph() {
		strategy := "FORWARD"
		if j.load != nil {
			strategy = "HASH"
		}
		for v := len(j.vertexIDs) - 1; v >= 0; v-- {
			node := planNode{ID: j.vertexIDs[v], Parallelism: j.vertexParallelism[v], Description: j.vertexNames[v]}
			for num, u := range j.vertexInputs[v] {
				node.Inputs = append(node.Inputs, planInput{
					Num: num, ID: j.vertexIDs[u], ShipStrategy: strategy, Exchange: "pipelined_bounded",
				})
			}
			nodes = append(nodes, node)
		}
	}
	if !j.hasGraph() {
		// A job that never got past its initialisation has no plan: {} until 2.1 typed the plan, and
		// then one of empty strings and no nodes.
		return jobPlanBody{Nodes: nodes, empty: flinkBefore(jm.flinkVersion, 2, 1)}
	}
	return jobPlanBody{JID: j.id, Name: j.name, Type: "STREAMING", Nodes: nodes}
}
