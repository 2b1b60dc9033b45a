package flink

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// ImageReferencePattern is a container image reference as the container runtimes parse it
// (github.com/distribution/reference): [registry[:port]/]repository[:tag][@digest], the repository
// in lowercase. It is written without backslashes so that the CRDs' CEL rule on spec.image carries it
// verbatim; deploy/crdtest checks that they agree.
const ImageReferencePattern = `^(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:[.](?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?/)?` +
	`[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*)*` +
	`(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$`

var imageReference = regexp.MustCompile(ImageReferencePattern)

// MaxParallelism is the highest parallelism Flink runs an operator with (its upper bound of
// pipeline.max-parallelism); a job asking for more fails when it is submitted.
const MaxParallelism = 1 << 15

// checkCluster names the first field of the owner's spec that would render a cluster that cannot
// work: pods that never pull their image, JobManagers that each run a cluster of their own, pod
// templates the merge cannot read (checkPodTemplates). The schema refuses these at apply time where
// CEL can express them; this catches the rest, and objects stored before a rule existed, before
// anything is created. Memory is checked where it is sized (memoryConfig).
func checkCluster(o *ClusterOwner) error {
	if !imageReference.MatchString(o.Spec.Image) {
		return fmt.Errorf("spec.image %q is not a container image reference: [registry[:port]/]repository[:tag][@digest], "+
			"with a lowercase repository and no spaces", o.Spec.Image)
	}
	if r := o.JobManagerReplicas(); r > 1 && !ConfigHasHighAvailability(o.Spec.FlinkConfig) {
		return fmt.Errorf("spec.jobManagerConfig.replicas is %d, which needs Flink high availability "+
			"(flinkConfig high-availability.type, e.g. kubernetes): without it each JobManager runs a cluster of its own", r)
	}
	return checkPodTemplates(o)
}

// CheckJob names the first field of a FlinkApplication whose job cannot run as asked: a
// parallelism Flink refuses, or savepoints (the default upgradeMode) without a directory to write
// them to. CEL cannot read flinkConfig, whose values may be of any JSON type, so the directory is
// checked here, before anything is created.
func CheckJob(app *v1beta1.FlinkApplication) error {
	if p := app.Spec.Parallelism; p < 1 || p > MaxParallelism {
		return fmt.Errorf("spec.parallelism %d must be between 1 and %d, the highest parallelism Flink runs", p, MaxParallelism)
	}
	mode := app.Spec.UpgradeMode
	if mode == "" && !app.Spec.SavepointDisabled {
		mode = v1beta1.UpgradeModeSavepoint
	}
	if mode == v1beta1.UpgradeModeSavepoint && !ConfigHasSavepointDirectory(app.Spec.FlinkConfig) {
		return fmt.Errorf("spec.upgradeMode Savepoint (the default) needs a savepoint directory: set spec.flinkConfig " +
			"state.savepoints.dir (execution.checkpointing.savepoint-dir from Flink 1.20), or choose upgradeMode LastState or Stateless")
	}
	return nil
}

// SavepointDirectoryKeys name Flink's default savepoint directory, before and after Flink 1.20.
var SavepointDirectoryKeys = []string{"state.savepoints.dir", "execution.checkpointing.savepoint-dir"}

// ConfigHasSavepointDirectory tells whether this Flink configuration names a default savepoint
// directory, which savepoints the operator triggers need. It takes the configuration alone because a
// session job's is its cluster's with its own over it. A configuration that cannot be read counts
// as having one.
func ConfigHasSavepointDirectory(flinkConfig v1beta1.FlinkConfig) bool {
	config, err := flinkConfig.Strings()
	if err != nil {
		// Rendering reports the bad value, naming its key.
		return true
	}
	for _, k := range SavepointDirectoryKeys {
		if strings.TrimSpace(config[k]) != "" {
			return true
		}
	}
	return false
}
