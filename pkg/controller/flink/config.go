package flink

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// hostIPRef is expanded to the pod's IP by the image's entrypoint (envsubst), from the HOST_IP variable
// the operator sets; the pod's name does not resolve in cluster DNS, its IP always works.
const hostIPRef = "$HOST_IP"

// RenderFlinkConfig renders the Flink configuration of the JobManager and of the TaskManagers of the
// owner's cluster with this hash, as sorted "key: value" lines for FLINK_PROPERTIES.
//
// The user's flinkConfig comes first and the operator's keys override it, because the pods, Services
// and REST calls are built around them: slots, the five ports, memory sized to the container, and
// the JobManager's address. Without high availability every pod reaches the JobManager through the
// cluster's versioned Service. With it (high-availability or high-availability.type set to anything
// but "none"), the JobManager advertises its pod IP, TaskManagers find the leader through the HA
// services, and kubernetes.cluster-id is set per cluster so that a new cluster never recovers the jobs
// of the one it replaces. TaskManagers always advertise their pod IP.
//
// Memory keys follow flinkVersion: process size from 1.11 on, heap before. An empty or unparsable
// flinkVersion counts as modern (Lyft treats it as old): every Flink version still maintained sizes
// memory by process size, and the heap keys are deprecated or gone there.
func (o ClusterOwner) RenderFlinkConfig(hash string) (jm, tm string, err error) {
	common, err := o.Spec.FlinkConfig.Strings()
	if err != nil {
		return "", "", err
	}
	// The operator decides the JobManager's address; a user value would point one cluster at another.
	user := common["jobmanager.rpc.address"]
	delete(common, "jobmanager.rpc.address")
	// Recovery after a failed savepoint restores the old job's newest checkpoint after cancelling it,
	// which only works if cancelling keeps the checkpoint; Flink's default deletes it.
	if _, set := common[CheckpointRetentionKey]; !set {
		common[CheckpointRetentionKey] = RetainOnCancellation
	}
	if n := CheckpointsToRetain(o.Spec.FlinkConfig, o.KeepCheckpointsFor); n > 0 {
		common[RetainedCheckpointsKey] = strconv.Itoa(n)
	}

	memory, err := memoryConfig(&o)
	if err != nil {
		return "", "", err
	}
	maps.Copy(common, memory)
	maps.Copy(common, map[string]string{
		"taskmanager.numberOfTaskSlots":       strconv.Itoa(int(o.TaskSlots())),
		"jobmanager.rpc.port":                 strconv.Itoa(int(o.RPCPort())),
		"blob.server.port":                    strconv.Itoa(int(o.BlobPort())),
		"query.server.port":                   strconv.Itoa(int(o.QueryPort())),
		"rest.port":                           strconv.Itoa(int(o.UIPort())),
		"metrics.internal.query-service.port": strconv.Itoa(int(o.MetricsQueryPort())),
	})

	jmConfig, tmConfig := maps.Clone(common), maps.Clone(common)
	if highAvailability(common) {
		// Each cluster's HA identity is its own: a shared one would make a new cluster recover, or
		// delete, the jobs of another.
		clusterID := VersionedServiceNameOf(o.Name, hash)
		for _, c := range []map[string]string{jmConfig, tmConfig} {
			c["kubernetes.cluster-id"], c["high-availability.cluster-id"] = clusterID, clusterID
			if o.Namespace != "" {
				// Flink writes its HA ConfigMaps to kubernetes.namespace, "default" unless told:
				// there they would sit beside other namespaces' clusters of the same name, out of
				// reach of the owner's clean-up and of its guardian.
				c["kubernetes.namespace"] = o.Namespace
			}
		}
		jmConfig["jobmanager.rpc.address"] = hostIPRef
	} else {
		jmConfig["jobmanager.rpc.address"] = VersionedServiceNameOf(o.Name, hash)
		tmConfig["jobmanager.rpc.address"] = VersionedServiceNameOf(o.Name, hash)
	}
	tmConfig["taskmanager.host"] = hostIPRef
	if o.JarInImage != "" {
		jmConfig[UploadDirKey] = JarUploadDir(o.Spec.FlinkConfig)
	}
	owned := maps.Clone(jmConfig)
	maps.Copy(owned, tmConfig)
	if user != "" {
		owned["jobmanager.rpc.address"] = user // the address is decided per component; any user value is ignored, as before
	}
	if err := checkFlinkConfig(&o, owned); err != nil {
		return "", "", err
	}

	if jm, err = configLines(jmConfig); err != nil {
		return "", "", err
	}
	if tm, err = configLines(tmConfig); err != nil {
		return "", "", err
	}
	return jm, tm, nil
}

// CheckpointRetentionKey is the Flink setting that decides whether a cancelled job's checkpoints survive.
const CheckpointRetentionKey = "execution.checkpointing.externalized-checkpoint-retention"

// CheckpointRetentionAnnotation on a cluster's JobManager Deployment is the externalized-checkpoint
// retention the cluster was rendered with (the user's, or the operator's default). A session job's
// job runs with its cluster's: what the FlinkSessionCluster's spec says now may be a later edit,
// which only a new Flink cluster runs with.
const CheckpointRetentionAnnotation = "flink.k8s.io/checkpoint-retention"

// RenderedCheckpointRetention is the externalized-checkpoint retention a cluster of this
// configuration is rendered with: the configuration's, or the operator's default.
func RenderedCheckpointRetention(config v1beta1.FlinkConfig) string {
	if v, ok := config[CheckpointRetentionKey].(string); ok {
		return v
	}
	return RetainOnCancellation
}

// RetainOnCancellation keeps externalized checkpoints when the job is cancelled.
const RetainOnCancellation = "RETAIN_ON_CANCELLATION"

// ConfigRetainsCheckpointsOnCancel tells whether a job run with this Flink configuration keeps its
// checkpoints when it is cancelled. It takes the configuration alone because a session job's is its
// cluster's with its own over it.
func ConfigRetainsCheckpointsOnCancel(config v1beta1.FlinkConfig) bool {
	v, ok := config[CheckpointRetentionKey].(string)
	return !ok || strings.EqualFold(strings.TrimSpace(v), RetainOnCancellation)
}

// CheckpointsSurviveEnd tells whether the checkpoints of a job run with this Flink configuration
// are still on storage once it ended in the terminal state (CANCELED, FAILED, FINISHED), as
// externalized-checkpoint-retention says: RETAIN_ON_CANCELLATION (the operator's default) keeps them
// through a cancel or a failure, DELETE_ON_CANCELLATION through a failure only, and
// NO_EXTERNALIZED_CHECKPOINTS, Flink's own default, never. A finished job's are discarded.
//
// A job failing or cancelling is judged by the end it is on its way to.
func CheckpointsSurviveEnd(config v1beta1.FlinkConfig, terminal string) bool {
	v, _ := config[CheckpointRetentionKey].(string)
	retention := strings.ToUpper(strings.TrimSpace(v))
	switch terminal {
	case "CANCELED", "CANCELLING":
		return retention == "" || retention == RetainOnCancellation
	case "FAILED", "FAILING":
		return retention == "" || retention == RetainOnCancellation || retention == "DELETE_ON_CANCELLATION"
	}
	return false
}

// highAvailability reports whether the configuration turns on JobManager high availability, under
// the key of Flink before 1.17 or the one after.
func highAvailability(config map[string]string) bool {
	for _, key := range []string{"high-availability", "high-availability.type"} {
		if v := strings.TrimSpace(config[key]); v != "" && !strings.EqualFold(v, "none") {
			return true
		}
	}
	return false
}

// configLines writes one "key: value" line per key, sorted so that the same configuration always
// renders the same. A line break would let one value inject other keys, so it is rejected.
func configLines(config map[string]string) (string, error) {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(config)) {
		v := config[k]
		if strings.ContainsAny(k, "\r\n") || strings.ContainsAny(v, "\r\n") {
			return "", fmt.Errorf("flinkConfig %q must be on one line", k)
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(k + ": " + v)
	}
	return b.String(), nil
}

// ParseFlinkVersion reads the major and minor version from strings like "1.20", "1.11.3", "v1.8" or
// "2.0-SNAPSHOT", as the REST client does to choose what it sends. A lone major version ("2") reads
// as minor 0.
func ParseFlinkVersion(s string) (major, minor int, ok bool) { return client.ParseFlinkVersion(s) }

// isModernFlink reports whether Flink sizes memory by process size (1.11 and later). Versions that
// cannot be read count as modern; see RenderFlinkConfig.
func isModernFlink(version string) bool {
	major, minor, ok := ParseFlinkVersion(version)
	return !ok || major > 1 || (major == 1 && minor >= 11)
}

// SchedulerKey selects the JobManager's scheduler.
const SchedulerKey = "jobmanager.scheduler"

// ConfigSelectsAdaptiveScheduler tells whether a cluster with this Flink configuration runs Flink's
// adaptive scheduler, which can change a running job's parallelism through its resource
// requirements without a new job.
func ConfigSelectsAdaptiveScheduler(config v1beta1.FlinkConfig) bool {
	v, ok := config[SchedulerKey].(string)
	return ok && strings.EqualFold(strings.TrimSpace(v), "adaptive")
}

// ConfigHasHighAvailability tells whether a cluster with this Flink configuration runs Flink HA: a
// JobManager that restarts, or a cluster created again under the same hash, recovers the cluster's
// jobs itself. A configuration that cannot be read has none.
func ConfigHasHighAvailability(config v1beta1.FlinkConfig) bool {
	common, err := config.Strings()
	return err == nil && highAvailability(common)
}

// programArgument is Flink 1.x's pattern for one argument of a programArgs string
// (JarHandlerUtils.tokenizeArguments): a run of non-space characters that does not start with a
// quote, or a quoted string, each then stripped of every quote character.
var programArgument = regexp.MustCompile(`([^"']\S*|".+?"|'.+?')\s*`)

// ProgramArguments splits a programArgs string into arguments exactly as Flink 1.x splits it. The
// operator sends the list (programArgsList): Flink 2.x has no programArgs and refuses a request
// that names it, and 1.x runs the same arguments either way.
func ProgramArguments(args string) []string {
	var out []string
	for _, m := range programArgument.FindAllString(args, -1) {
		out = append(out, strings.NewReplacer(`"`, "", "'", "").Replace(strings.TrimSpace(m)))
	}
	return out
}
