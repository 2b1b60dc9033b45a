package flinksim

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Checkpoint retention policies (execution.checkpointing.externalized-checkpoint-retention).
const (
	retainNever        = "NO_EXTERNALIZED_CHECKPOINTS"
	retainOnCancel     = "RETAIN_ON_CANCELLATION"
	deleteOnCancel     = "DELETE_ON_CANCELLATION"
	noCheckpointPath   = "<checkpoint-not-externally-addressable>"
	defaultJobName     = "Flink Streaming Job"
	defaultStoreTTL    = 5 * time.Minute
	defaultJobStoreTTL = time.Hour
)

// clusterConfig is the part of the Flink configuration the simulator acts on.
// Both the 1.20 keys and their deprecated aliases are honoured, new keys first.
type clusterConfig struct {
	raw                map[string]string
	checkpointDir      string
	savepointDir       string
	checkpointInterval time.Duration // 0: periodic checkpointing disabled
	checkpointTimeout  time.Duration
	slotsPerTM         int
	parallelism        int
	retention          string
	numRetained        int
	restartEnabled     bool
	restartAttempts    int // 0: unlimited
	restartDelay       time.Duration
	slotRequestTimeout time.Duration
	asyncStoreTTL      time.Duration
	jobStoreTTL        time.Duration
	uploadDir          string
	refreshInterval    int64
	historySize        int
	exceptionHistory   int
	stateBackend       string
	exactlyOnce        bool
	adaptive           adaptiveConfig
}

// adaptiveConfig is the part of the configuration the adaptive scheduler
// (jobmanager.scheduler: adaptive) acts on, with Flink 1.20's defaults.
type adaptiveConfig struct {
	enabled bool
	// cooldown is scaling-interval.min: a running job rescales no sooner than
	// this after it started running or last changed scale.
	cooldown time.Duration
	// stabilization is how long a job waits with enough slots for its lower
	// bounds, hoping for its upper bounds, before it runs with what it has.
	stabilization time.Duration
	// resourceWait is how long a job waits for resources at all before it runs
	// with what it has or fails; negative waits forever.
	resourceWait time.Duration
	// minIncrease is the parallelism gain of one vertex that is worth a restart.
	minIncrease int
}

func parseClusterConfig(raw map[string]string, uploadUUID string) clusterConfig {
	get := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := raw[k]; ok && strings.TrimSpace(v) != "" {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	intOr := func(def int, keys ...string) int {
		if n, err := strconv.Atoi(get(keys...)); err == nil {
			return n
		}
		return def
	}
	durOr := func(def time.Duration, keys ...string) time.Duration {
		if d, err := parseFlinkDuration(get(keys...)); err == nil {
			return d
		}
		return def
	}
	c := clusterConfig{
		raw:                raw,
		checkpointDir:      normalizePath(get("execution.checkpointing.dir", "state.checkpoints.dir")),
		savepointDir:       normalizePath(get("execution.checkpointing.savepoint-dir", "state.savepoints.dir")),
		checkpointInterval: durOr(0, "execution.checkpointing.interval"),
		checkpointTimeout:  durOr(10*time.Minute, "execution.checkpointing.timeout"),
		slotsPerTM:         max(intOr(1, "taskmanager.numberOfTaskSlots"), 1),
		parallelism:        intOr(1, "parallelism.default"),
		retention:          strings.ToUpper(get("execution.checkpointing.externalized-checkpoint-retention")),
		numRetained:        max(intOr(1, "execution.checkpointing.num-retained", "state.checkpoints.num-retained"), 1),
		restartDelay:       durOr(0, "restart-strategy.fixed-delay.delay", "restart-strategy.exponential-delay.initial-backoff"),
		slotRequestTimeout: durOr(5*time.Minute, "slot.request.timeout"),
		asyncStoreTTL:      durOr(defaultStoreTTL, "rest.async.store-duration"),
		uploadDir:          get("web.upload.dir"),
		refreshInterval:    int64(intOr(3000, "web.refresh-interval")),
		historySize:        max(intOr(10, "web.checkpoints.history"), 1),
		exceptionHistory:   max(intOr(16, "web.exception-history-size"), 1),
		stateBackend:       stateBackendClass(get("state.backend.type", "state.backend")),
		exactlyOnce:        !strings.EqualFold(get("execution.checkpointing.mode"), "AT_LEAST_ONCE"),
	}
	if c.retention == "" {
		c.retention = retainNever
	}
	c.adaptive = adaptiveConfig{
		enabled:       strings.EqualFold(get("jobmanager.scheduler"), "adaptive"),
		cooldown:      durOr(30*time.Second, "jobmanager.adaptive-scheduler.scaling-interval.min"),
		stabilization: durOr(10*time.Second, "jobmanager.adaptive-scheduler.resource-stabilization-timeout"),
		resourceWait:  durOr(5*time.Minute, "jobmanager.adaptive-scheduler.resource-wait-timeout"),
		minIncrease:   max(intOr(1, "jobmanager.adaptive-scheduler.min-parallelism-increase"), 1),
	}
	// A negative resource-wait-timeout ("-1 ms") means waiting forever.
	if strings.HasPrefix(get("jobmanager.adaptive-scheduler.resource-wait-timeout"), "-") {
		c.adaptive.resourceWait = -1
	}
	if c.parallelism < 1 {
		c.parallelism = 1
	}
	// jobstore.expiration-time is a number of seconds.
	c.jobStoreTTL = defaultJobStoreTTL
	if n, err := strconv.ParseInt(get("jobstore.expiration-time"), 10, 64); err == nil && n >= 0 {
		c.jobStoreTTL = time.Duration(n) * time.Second
	}
	if c.uploadDir == "" {
		c.uploadDir = "/tmp/flink-web-" + uploadUUID
	}
	c.uploadDir = strings.TrimRight(c.uploadDir, "/") + "/flink-web-upload"
	// Without an explicit strategy Flink restarts only jobs that checkpoint.
	switch strings.ToLower(get("restart-strategy.type", "restart-strategy")) {
	case "":
		c.restartEnabled = c.checkpointInterval > 0
	case "none", "off", "disable":
		c.restartEnabled = false
	case "fixed-delay", "fixeddelay":
		c.restartEnabled = true
		c.restartAttempts = intOr(1, "restart-strategy.fixed-delay.attempts")
	default:
		c.restartEnabled = true
	}
	return c
}

func stateBackendClass(v string) string {
	switch strings.ToLower(v) {
	case "rocksdb", "org.apache.flink.contrib.streaming.state.embeddedrocksdbstatebackend":
		return "EmbeddedRocksDBStateBackend"
	}
	return "HashMapStateBackend"
}

var durationRE = regexp.MustCompile(`^(\d+)\s*([a-zA-Zµ]*)$`)

// parseFlinkDuration reads Flink's duration syntax: a number with an optional
// unit, milliseconds when the unit is missing ("10s", "500 ms", "1 min", "60000").
func parseFlinkDuration(s string) (time.Duration, error) {
	m := durationRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, err
	}
	var unit time.Duration
	switch strings.ToLower(m[2]) {
	case "ns", "nano", "nanos", "nanosecond", "nanoseconds":
		unit = time.Nanosecond
	case "µs", "us", "micro", "micros", "microsecond", "microseconds":
		unit = time.Microsecond
	case "", "ms", "milli", "millis", "millisecond", "milliseconds":
		unit = time.Millisecond
	case "s", "sec", "secs", "second", "seconds":
		unit = time.Second
	case "m", "min", "mins", "minute", "minutes":
		unit = time.Minute
	case "h", "hour", "hours":
		unit = time.Hour
	case "d", "day", "days":
		unit = 24 * time.Hour
	default:
		return 0, fmt.Errorf("invalid duration unit in %q", s)
	}
	if n > math.MaxInt64/int64(unit) {
		return 0, fmt.Errorf("duration %q overflows", s)
	}
	return time.Duration(n) * unit, nil
}

var emptyAuthorityRE = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*):///+`)
var schemeRE = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*):`)

// normalizePath spells a file-system path the way Flink's Path prints it: no
// trailing slash, "file:///x" as "file:/x", and scheme-less paths qualified with
// "file:" because they resolve to the local file system.
func normalizePath(p string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return ""
	}
	p = emptyAuthorityRE.ReplaceAllString(p, "$1:/")
	if !schemeRE.MatchString(p) {
		p = "file:" + p
	}
	for len(p) > 1 && strings.HasSuffix(p, "/") && !strings.HasSuffix(p, "://") {
		p = strings.TrimSuffix(p, "/")
	}
	return p
}

// pathScheme names the file system a path lives on, for FileNotFoundException texts.
func pathScheme(p string) string {
	if m := schemeRE.FindStringSubmatch(p); m != nil {
		return m[1]
	}
	return "file"
}
