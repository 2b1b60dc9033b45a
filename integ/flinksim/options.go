package flinksim

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/clock"
)

// Options configures one simulated JobManager.
type Options struct {
	// Clock drives every transition. Nil means the real clock.
	Clock clock.PassiveClock
	// Name identifies the JobManager in logs and in the Timeline.
	Name string
	// FlinkConfig is the cluster configuration (flink-conf / FLINK_PROPERTIES).
	FlinkConfig map[string]string
	// Jars lists the jar ids present in the upload directory. Nil means every jar
	// id exists, as with an image that bundles all of them.
	Jars []string
	// TaskManagers and SlotsPerTaskManager size the cluster at start; both can be
	// changed later as the cluster scales. SlotsPerTaskManager 0 means
	// taskmanager.numberOfTaskSlots (default 1).
	TaskManagers        int
	SlotsPerTaskManager int
	Timings             Timings
	// Timeline, when set, records every job state change under AppKey.
	Timeline *Timeline
	AppKey   string
	// Storage is the "file system" holding savepoints and checkpoints. Share one
	// between JobManagers so a new cluster can restore from an old one's
	// savepoint. Nil means a private Storage.
	Storage *Storage
	// Seed makes injected faults reproducible.
	Seed int64
	// FlinkVersion is the Flink release simulated, such as "1.14" or "1.18.1"
	// ("v1_14" is accepted too). Empty means 1.20. Only behaviour that differs
	// in ways the operator can observe follows it: see doc.go.
	FlinkVersion string

	// haScope and haClusterID are set by the Fleet: HA stores are namespaced
	// like the ConfigMaps that hold them, and a pod name is no stable fallback
	// for the cluster id.
	haScope, haClusterID string
}

// Timings are the simulated durations of asynchronous work. A zero field takes
// its default; a negative field means the step is instantaneous.
type Timings struct {
	Initialize time.Duration // INITIALIZING → CREATED (or FAILED on a bad restore); default 100ms
	Schedule   time.Duration // CREATED → RUNNING; default 200ms
	Savepoint  time.Duration // savepoint trigger → completion; default 1s
	Cancel     time.Duration // CANCELLING → CANCELED; default 300ms
	Checkpoint time.Duration // periodic or manual checkpoint trigger → completion; default 200ms
	Fail       time.Duration // FAILING → FAILED; default 100ms
	Restart    time.Duration // RESTARTING → RUNNING unless restart-strategy.fixed-delay.delay says otherwise; default 1s
	// JobCacheTTL makes job-level GETs (/jobs/:id, /config, /exceptions,
	// /checkpoints) serve a snapshot up to this old, like Flink's
	// web.refresh-interval cache (3s in real clusters). Zero disables it.
	JobCacheTTL time.Duration
	// Recovery is how long a restarted JobManager process answers 503 while it
	// elects a leader, before it serves again and recovers HA jobs; default 1s.
	Recovery time.Duration
}

// Effective is the timings a JobManager actually uses: the defaults in place of zero fields, and
// zero in place of negative ones.
func (t Timings) Effective() Timings { return t.withDefaults() }

func (t Timings) withDefaults() Timings {
	pick := func(v, def time.Duration) time.Duration {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	return Timings{
		Initialize:  pick(t.Initialize, 100*time.Millisecond),
		Schedule:    pick(t.Schedule, 200*time.Millisecond),
		Savepoint:   pick(t.Savepoint, time.Second),
		Cancel:      pick(t.Cancel, 300*time.Millisecond),
		Checkpoint:  pick(t.Checkpoint, 200*time.Millisecond),
		Fail:        pick(t.Fail, 100*time.Millisecond),
		Restart:     pick(t.Restart, time.Second),
		JobCacheTTL: max(t.JobCacheTTL, 0),
		Recovery:    pick(t.Recovery, time.Second),
	}
}

var versionRE = regexp.MustCompile(`^[vV]?(\d+)[._](\d+)`)

// flinkAtLeast tells whether a FlinkVersion is major.minor or newer; an empty or unreadable version
// is the simulated 1.20.
func flinkAtLeast(version string, major, minor int) bool {
	ma, mi := 1, 20
	if m := versionRE.FindStringSubmatch(strings.TrimSpace(version)); m != nil {
		ma, _ = strconv.Atoi(m[1])
		mi, _ = strconv.Atoi(m[2])
	}
	return ma > major || (ma == major && mi >= minor)
}

// flinkBefore tells whether a FlinkVersion is older than major.minor. An empty
// or unreadable version is the simulated 1.20.
func flinkBefore(version string, major, minor int) bool { return !flinkAtLeast(version, major, minor) }
