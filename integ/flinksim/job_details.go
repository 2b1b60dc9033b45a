package flinksim

import (
	"encoding/json"
	"strconv"
	"time"
)

// The job details answer (GET /jobs/:jobid) is the simulator's busiest at scale: a poll of every
// job every statusPollInterval. It is built from structs, not maps, because encoding/json sorts a
// map's keys by reflection on every answer: at 10,000 jobs that took a quarter of the simulator's
// CPU, on the cores the operator it stands beside is measured on. The members and their values are
// Flink's JobDetailsInfo, as the maps had them; only their order differs, which JSON leaves open.

// jobDetailsBody is JobDetailsInfo.
type jobDetailsBody struct {
	JID              string        `json:"jid"`
	Name             string        `json:"name"`
	IsStoppable      bool          `json:"isStoppable"`
	State            string        `json:"state"`
	JobType          string        `json:"job-type,omitempty"` // 1.20+
	StartTime        int64         `json:"start-time"`
	EndTime          int64         `json:"end-time"`
	Duration         int64         `json:"duration"`
	MaxParallelism   int64         `json:"maxParallelism"`
	Now              int64         `json:"now"`
	Timestamps       orderedCounts `json:"timestamps"`
	Vertices         []vertexInfo  `json:"vertices"`
	StatusCounts     orderedCounts `json:"status-counts"`
	Plan             jobPlanBody   `json:"plan"`
	PendingOperators *int          `json:"pending-operators,omitempty"` // 2.0+
	// ApplicationID and SchedulerType are 2.3's, and null for a job that never got past its
	// initialisation: raw JSON, so that they can be absent, null or a string.
	ApplicationID json.RawMessage `json:"application-id,omitempty"`
	SchedulerType json.RawMessage `json:"schedulerType,omitempty"`
}

// vertexInfo is JobDetailsVertexInfo.
type vertexInfo struct {
	ID                 string        `json:"id"`
	Name               string        `json:"name"`
	MaxParallelism     int           `json:"maxParallelism"`
	Parallelism        int           `json:"parallelism"`
	Status             string        `json:"status"`
	StartTime          int64         `json:"start-time"`
	EndTime            int64         `json:"end-time"`
	Duration           int64         `json:"duration"`
	Tasks              orderedCounts `json:"tasks"`
	Metrics            vertexMetrics `json:"metrics"`
	SlotSharingGroupID string        `json:"slotSharingGroupId,omitempty"` // 1.20+
}

// vertexMetrics is IOMetricsInfo; the simulator moves no bytes through a job's vertices.
type vertexMetrics struct {
	ReadBytes                   int64  `json:"read-bytes"`
	ReadBytesComplete           bool   `json:"read-bytes-complete"`
	WriteBytes                  int64  `json:"write-bytes"`
	WriteBytesComplete          bool   `json:"write-bytes-complete"`
	ReadRecords                 int64  `json:"read-records"`
	ReadRecordsComplete         bool   `json:"read-records-complete"`
	WriteRecords                int64  `json:"write-records"`
	WriteRecordsComplete        bool   `json:"write-records-complete"`
	AccumulatedBackpressureTime int64  `json:"accumulated-backpressured-time"`
	AccumulatedIdleTime         int64  `json:"accumulated-idle-time"`
	AccumulatedBusyTime         rawNum `json:"accumulated-busy-time"`
}

// jobPlanBody is JobPlanInfo's plan.
type jobPlanBody struct {
	JID   string     `json:"jid"`
	Name  string     `json:"name"`
	Type  string     `json:"type"`
	Nodes []planNode `json:"nodes"`
	// empty makes it the plan of a job without an execution graph (one that never got past its
	// initialisation) before 2.3, which Flink answers as {}.
	empty bool
}

func (p jobPlanBody) MarshalJSON() ([]byte, error) {
	if p.empty {
		return []byte("{}"), nil
	}
	type plain jobPlanBody
	return json.Marshal(plain(p))
}

type planNode struct {
	ID                  string      `json:"id"`
	Parallelism         int         `json:"parallelism"`
	Operator            string      `json:"operator"`
	OperatorStrategy    string      `json:"operator_strategy"`
	Description         string      `json:"description"`
	OptimizerProperties struct{}    `json:"optimizer_properties"`
	Inputs              []planInput `json:"inputs,omitempty"`
}

type planInput struct {
	Num          int    `json:"num"`
	ID           string `json:"id"`
	ShipStrategy string `json:"ship_strategy"`
	Exchange     string `json:"exchange"`
}

// rawNum is a number written as it is given, as a Java double is ("0.0").
type rawNum string

func (n rawNum) MarshalJSON() ([]byte, error) { return []byte(n), nil }

// orderedCounts is an object of numbers with its keys in a fixed order, written without the
// reflection and sorting a map costs.
type orderedCounts struct {
	keys   []string
	counts map[string]int64
}

func (c orderedCounts) MarshalJSON() ([]byte, error) {
	out := make([]byte, 0, 24*len(c.keys)+2)
	out = append(out, '{')
	for i, k := range c.keys {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, k)
		out = append(out, ':')
		out = strconv.AppendInt(out, c.counts[k], 10)
	}
	return append(out, '}'), nil
}

func countsOf(keys []string, counts map[string]int) orderedCounts {
	out := orderedCounts{keys: keys, counts: make(map[string]int64, len(keys))}
	for _, k := range keys {
		out.counts[k] = int64(counts[k])
	}
	return out
}

func (jm *JobManager) jobDetails(j *job, now time.Time) jobDetailsBody {
	timestamps := orderedCounts{keys: jobStates, counts: make(map[string]int64, len(jobStates))}
	for _, s := range jobStates {
		if t, ok := j.stateTimes[s]; ok {
			timestamps.counts[s] = t.UnixMilli()
		}
	}
	vertices := jm.vertexInfos(j, now)
	statusCounts := map[string]int{}
	for _, v := range vertices {
		statusCounts[v.Status]++
	}
	body := jobDetailsBody{
		JID: j.id, Name: j.name, State: j.state,
		StartTime: j.submittedAt.UnixMilli(), EndTime: j.endMillis(), Duration: j.durationMillis(now),
		MaxParallelism: -1, Now: now.UnixMilli(),
		Timestamps: timestamps, Vertices: vertices, StatusCounts: countsOf(executionStates, statusCounts),
		Plan: jm.plan(j),
	}
	if flinkAtLeast(jm.flinkVersion, 1, 20) {
		body.JobType = "STREAMING"
	}
	if flinkAtLeast(jm.flinkVersion, 2, 0) {
		// stream-graph is left out (NON_NULL): a streaming job has none.
		none := 0
		body.PendingOperators = &none
	}
	if hasApplications(jm.flinkVersion) {
		body.ApplicationID, body.SchedulerType = jsonNull, jsonNull
		if j.hasGraph() {
			body.ApplicationID, body.SchedulerType = jsonString(j.applicationID), jsonString(jm.schedulerType())
		}
	}
	return body
}

var jsonNull = json.RawMessage("null")

func jsonString(s string) json.RawMessage { return strconv.AppendQuote(nil, s) }

// schedulerType is how 2.3 names the scheduler a job runs on (JobManagerOptions.SchedulerType).
func (jm *JobManager) schedulerType() string {
	if jm.cfg.adaptive.enabled {
		return "Adaptive"
	}
	return "Default"
}
