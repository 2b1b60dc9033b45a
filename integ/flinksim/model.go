package flinksim

import (
	"io"
	"slices"
	"sort"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/flinkfsm/flinkfsm/pkg/idsource"
)

// JobManager is one simulated Flink session-cluster JobManager (Dispatcher,
// ResourceManager view and REST endpoint). All methods are safe for concurrent use.
type JobManager struct {
	mu       sync.Mutex
	clock    clock.PassiveClock
	name     string
	appKey   string
	timings  Timings
	cfg      clusterConfig
	storage  *Storage
	timeline *Timeline

	imageJars map[string]bool // nil: every jar exists
	uploaded  []jarFile
	deleted   map[string]bool // jars deleted through DELETE /jars/:id
	uploadID  string

	taskManagers int
	slotsPerTM   int

	jobs        []*job          // submission order, including terminal jobs still listed
	resultStore map[string]bool // job ids that reached a globally terminal state
	// applications (2.3+) in submission order, ended ones while their jobs are listed; appResults
	// the ids of those that ended (the application result store).
	applications []*application
	appResults   map[string]bool
	pending      []*pendingSubmit
	ops          []*operation // async operations in trigger order
	cache        map[string]cachedResponse
	// statsCopies are the copies of each job's checkpoint statistics the REST handlers answer
	// from, by job id, while Timings.JobCacheTTL is set (checkpointStatsOf).
	statsCopies map[string]*statsCopy

	faults    Faults
	faultSeed int64
	faultMu   sync.Mutex
	// requestsByPath counts the requests to each method and path, for faultDraws.
	requestsByPath map[string]uint64
	// failedFirst counts the requests per endpoint that Faults.FailFirst failed.
	failedFirst map[string]int

	load *loadRun // nil without a Load

	haKey string // "" without HA
	// flinkVersion is Options.FlinkVersion: the release whose REST API the JobManager speaks
	// (versions.go).
	flinkVersion string

	savepointTriggers int
	lastNow           time.Time
	startedAt         time.Time
	unavailableUntil  time.Time // REST answers 503 until then, while a restarted process elects a leader
	recoverAt         time.Time // when the process recovers its HA jobs; zero when it has
}

// JobInfo is a test-facing summary of one job.
type JobInfo struct {
	ID    string
	Name  string
	State string
	// Parallelism is the job's parallelism as submitted.
	Parallelism  int
	TasksRunning bool
	RestoredFrom string
	SubmittedAt  time.Time
	// Restarts counts failovers: restarts after task failures.
	Restarts int
	// Rescales counts the adaptive scheduler's in-place restarts to a new
	// parallelism; the job keeps its id.
	Rescales int
	// VertexIDs are the job's vertices, source first, as GET /jobs/:id and
	// /jobs/:id/resource-requirements name them.
	VertexIDs []string
	// VertexNames are the vertices' names, in VertexIDs order: the Load's, or
	// the default source and sink.
	VertexNames []string
	// VertexParallelism is each vertex's current parallelism, in VertexIDs
	// order. Only the adaptive scheduler moves it away from Parallelism.
	VertexParallelism []int
	// Args are the arguments the job's main() got.
	Args []string
}

// CurrentParallelism is the highest current vertex parallelism, which is the
// number of slots the job occupies while its tasks run.
func (i JobInfo) CurrentParallelism() int {
	n := 0
	for _, p := range i.VertexParallelism {
		n = max(n, p)
	}
	return n
}

// NewJobManager starts a JobManager with no jobs.
func NewJobManager(opts Options) *JobManager {
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	name := opts.Name
	if name == "" {
		name = "jobmanager"
	}
	storage := opts.Storage
	if storage == nil {
		storage = NewStorage()
	}
	jm := &JobManager{
		clock:        clk,
		name:         name,
		appKey:       opts.AppKey,
		timings:      opts.Timings.withDefaults(),
		storage:      storage,
		timeline:     opts.Timeline,
		faultSeed:    opts.Seed,
		haKey:        haKey(opts, name),
		flinkVersion: opts.FlinkVersion,
	}
	jm.cfg.raw = copyMap(opts.FlinkConfig)
	jm.reset(clk.Now())
	if jm.haKey != "" {
		// Lazily, so that faults set right after creation apply to recovered jobs.
		jm.recoverAt = jm.startedAt
	}
	if opts.Jars != nil {
		jm.imageJars = jarSet(opts.Jars)
	}
	jm.taskManagers = max(opts.TaskManagers, 0)
	jm.slotsPerTM = opts.SlotsPerTaskManager
	if jm.slotsPerTM <= 0 {
		jm.slotsPerTM = jm.cfg.slotsPerTM
	}
	if jm.timeline != nil {
		jm.timeline.attach(jm.sync)
	}
	jm.storage.attach(jm.sync)
	return jm
}

// reset gives the JobManager the state of a freshly started, non-HA process.
func (jm *JobManager) reset(now time.Time) {
	jm.uploadID = newUUID()
	jm.cfg = parseClusterConfig(jm.cfg.raw, jm.uploadID)
	jm.uploaded = nil
	jm.deleted = map[string]bool{}
	jm.jobs = nil
	jm.resultStore = map[string]bool{}
	jm.applications = nil
	jm.appResults = map[string]bool{}
	jm.pending = nil
	jm.recoverAt = time.Time{}
	jm.ops = nil
	jm.cache = map[string]cachedResponse{}
	jm.statsCopies = map[string]*statsCopy{}
	jm.lastNow = now
	jm.startedAt = now
}

func jarSet(jars []string) map[string]bool {
	set := map[string]bool{}
	for _, j := range jars {
		set[j] = true
	}
	return set
}

func (jm *JobManager) setImageJars(jars []string) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	jm.imageJars = jarSet(jars)
}

// Name is the JobManager's name as given in Options.
func (jm *JobManager) Name() string { return jm.name }

// Storage is where this JobManager writes savepoints and checkpoints.
func (jm *JobManager) Storage() *Storage { return jm.storage }

// SetTaskManagers changes the number of registered TaskManagers. Losing slots
// that running jobs use fails those jobs over, as a lost TaskManager does.
func (jm *JobManager) SetTaskManagers(n int) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	now := jm.advance()
	jm.taskManagers = max(n, 0)
	jm.rebalanceSlots(now)
}

// SetSlotsPerTaskManager changes taskmanager.numberOfTaskSlots for all TaskManagers.
func (jm *JobManager) SetSlotsPerTaskManager(n int) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	now := jm.advance()
	jm.slotsPerTM = max(n, 1)
	jm.rebalanceSlots(now)
}

// UploadedJars are the jars uploaded to the JobManager and not deleted since.
func (jm *JobManager) UploadedJars() []string {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	var out []string
	for _, f := range jm.uploaded {
		if !jm.deleted[f.id] {
			out = append(out, f.id)
		}
	}
	return out
}

// Jobs summarises every job the JobManager still lists.
func (jm *JobManager) Jobs() []JobInfo {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	jm.advance()
	out := make([]JobInfo, 0, len(jm.jobs))
	for _, j := range jm.jobs {
		out = append(out, JobInfo{
			ID: j.id, Name: j.name, State: j.state, Parallelism: j.parallelism,
			TasksRunning: j.hasSlots && j.state == stateRunning, RestoredFrom: j.restorePath,
			SubmittedAt: j.submittedAt, Restarts: j.restarts, Rescales: j.rescales,
			VertexIDs:         slices.Clone(j.vertexIDs),
			VertexNames:       slices.Clone(j.vertexNames),
			VertexParallelism: slices.Clone(j.vertexParallelism),
			Args:              append([]string(nil), j.args...),
		})
	}
	return out
}

// SavepointTriggers counts savepoint and stop-with-savepoint requests that
// started a new savepoint since the JobManager was created (across crashes).
// Idempotent repeats with a known triggerId do not count.
func (jm *JobManager) SavepointTriggers() int {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	return jm.savepointTriggers
}

// sync evaluates due transitions so observers like the Timeline see them.
func (jm *JobManager) sync() {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	jm.advance()
}

// advance applies every transition due up to now, in time order, and returns
// now. Callers hold jm.mu. Time never runs backwards for the model.
func (jm *JobManager) advance() time.Time {
	now := jm.clock.Now()
	if now.Before(jm.lastNow) {
		now = jm.lastNow
	}
	for {
		at, fire := jm.nextEvent()
		if fire == nil || at.After(now) {
			break
		}
		jm.integrateLoad(at)
		fire(at)
	}
	jm.integrateLoad(now)
	jm.lastNow = now
	return now
}

// nextEvent finds the earliest pending transition. Ties go to jobs in
// submission order, then operations in trigger order, then registrations and
// HA recovery, so runs are deterministic.
func (jm *JobManager) nextEvent() (time.Time, func(time.Time)) {
	var best time.Time
	var bestFire func(time.Time)
	consider := func(at time.Time, fire func(time.Time)) {
		if fire != nil && (bestFire == nil || at.Before(best)) {
			best, bestFire = at, fire
		}
	}
	for _, j := range jm.jobs {
		consider(jm.jobEvent(j))
	}
	for _, op := range jm.ops {
		consider(jm.operationEvent(op))
	}
	for _, p := range jm.pending {
		consider(p.at, func(at time.Time) { jm.register(p, at) })
	}
	if !jm.recoverAt.IsZero() {
		consider(jm.recoverAt, jm.recoverJobs)
	}
	return best, bestFire
}

func (jm *JobManager) job(id string) *job {
	for _, j := range jm.jobs {
		if j.id == id {
			return j
		}
	}
	return nil
}

func (jm *JobManager) totalSlots() int { return jm.taskManagers * jm.slotsPerTM }

func (jm *JobManager) usedSlots() int {
	used := 0
	for _, j := range jm.jobs {
		if j.hasSlots {
			used += j.slots()
		}
	}
	return used
}

// rebalanceSlots fails over the most recently deployed jobs while more slots
// are in use than exist, then hands free slots to waiting jobs.
func (jm *JobManager) rebalanceSlots(now time.Time) {
	for jm.usedSlots() > jm.totalSlots() {
		var victim *job
		for _, j := range jm.jobs {
			if j.hasSlots && (victim == nil || !j.deployedAt.Before(victim.deployedAt)) {
				victim = j
			}
		}
		lost := jm.taskManagerID(jm.taskManagers + 1)
		jm.failTasks(victim, now, taskManagerLost(lost))
	}
	jm.allocateSlots(now)
}

// allocateSlots offers free slots to jobs, oldest first. The DefaultScheduler
// deploys a waiting RUNNING job when all of its slots are free (a streaming job
// is one pipelined region); the adaptive scheduler has its own rules.
func (jm *JobManager) allocateSlots(now time.Time) {
	free := jm.totalSlots() - jm.usedSlots()
	for _, j := range jm.jobs {
		if jm.cfg.adaptive.enabled {
			free = jm.offerSlots(j, now, free)
			continue
		}
		if j.state == stateRunning && !j.hasSlots && j.slots() <= free {
			free -= j.slots()
			jm.deploy(j, now)
		}
	}
}

// slots is how many slots the job occupies while deployed: its vertices share
// one slot sharing group, so the widest vertex decides.
func (j *job) slots() int { return slices.Max(j.vertexParallelism) }

func (jm *JobManager) taskManagerID(i int) string {
	return jm.name + "-taskmanager-" + itoa(i)
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// randomHex returns n random lowercase hex characters, from crypto/rand unless a test swapped the
// source (UseIDSource): independently seeded JobManagers never mint the same job id or savepoint path.
func randomHex(n int) string { return ids.Hex(n) }

var ids idsource.Source

// UseIDSource makes the simulator's ids (job, trigger and jar ids, savepoint paths) come from r
// until the returned function restores the source before: a seeded run then replays exactly.
func UseIDSource(r io.Reader) (restore func()) { return ids.Use(r) }

func newUUID() string {
	h := randomHex(32)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
