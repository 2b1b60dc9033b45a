// Package portable is the part of flinkfsm's integration suite that runs anywhere: its tests use only
// the Kubernetes API and what the operator reports (status, Events, the objects it owns) and
// `kubectl flink`, never the Flink simulator, so the same tests run against the embedded local
// cluster with the simulator (`make test`) and against a real cluster with real Flink
// (`make integ-external`, see docs/testing.md). Which of the two is chosen by SelectTarget, from the
// environment.
//
// A test that needs simulator fault injection does not belong here (integ/e2e has those); a test
// that needs something a real cluster may lack skips itself with the reason. honest_test.go fails
// the build of the suite when a file here imports the simulator.
package portable

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// The environment variables SelectTarget reads.
const (
	// EnvExternal set to 1 (or true) runs the suite against the cluster of $KUBECONFIG.
	EnvExternal = "FLINKFSM_EXTERNAL"
	// EnvKubeconfig names the external cluster's kubeconfig; required in external mode.
	EnvKubeconfig = "KUBECONFIG"
	// EnvSkipInstall set to 1 uses an operator already installed in the cluster instead of
	// installing the chart.
	EnvSkipInstall = "FLINKFSM_SKIP_INSTALL"
	// EnvOperatorImage is the operator image the chart installs, repository[:tag].
	EnvOperatorImage = "FLINKFSM_OPERATOR_IMAGE"
	// EnvFlinkURLMode is how the installed operator reaches JobManagers: APIServerProxy or ServiceDNS.
	EnvFlinkURLMode = "FLINKFSM_FLINK_URL_MODE"
	// EnvFlinkImage is the Flink image of the test applications; it must hold EnvJar in
	// <web.upload.dir>/flink-web-upload (see FlinkUploadDir).
	EnvFlinkImage = "FLINKFSM_FLINK_IMAGE"
	// EnvJar is the jar id the applications run (spec.jarName).
	EnvJar = "FLINKFSM_JAR"
	// EnvEntryClass is the jar's main class (spec.entryClass).
	EnvEntryClass = "FLINKFSM_ENTRY_CLASS"
	// EnvNamespace is the namespace the chart is installed into (its release is named "flinkfsm").
	EnvNamespace = "FLINKFSM_NAMESPACE"
	// EnvHelmValues names a values file given to the chart after the suite's own (image pull
	// secrets, replicas, a cluster that already has the admission policy: admissionPolicy.enabled=false).
	EnvHelmValues = "FLINKFSM_HELM_VALUES"
	// EnvStorageClass is the StorageClass of the volume holding savepoints; empty for the cluster's default.
	EnvStorageClass = "FLINKFSM_STORAGE_CLASS"
)

// Defaults of the external mode. The Flink image is the one docs/testing.md builds: flink:1.20 with
// its StateMachineExample.jar copied into Flink's jar upload directory, where the operator's
// /jars/:jarid/run finds it. The example runs unbounded with keyed state, so savepoints carry state.
const (
	DefaultOperatorImage = "flinkfsm:dev"
	DefaultFlinkImage    = "flinkfsm/flink-statemachine:1.20"
	DefaultJar           = "StateMachineExample.jar"
	DefaultEntryClass    = "org.apache.flink.streaming.examples.statemachine.StateMachineExample"
	DefaultFlinkVersion  = "1.20"
	DefaultNamespace     = "flinkfsm-system"
	DefaultFlinkURLMode  = "APIServerProxy"
	// ReleaseName is the Helm release the suite installs or upgrades.
	ReleaseName = "flinkfsm"
	// FlinkUploadDir is the web.upload.dir the applications set: Flink looks for jars in its
	// flink-web-upload subdirectory, so the image must hold /opt/flink/flink-web-upload/<jar>.
	FlinkUploadDir = "/opt/flink"
	// StateVolumeClaim is the PersistentVolumeClaim each test namespace gets in external mode, mounted
	// at StateMountPath in every JobManager and TaskManager: savepoints must outlive the cluster that
	// took them, and a new cluster must read them.
	StateVolumeClaim = "flink-state"
	StateMountPath   = "/flink-state"
)

// Target is where the suite runs.
type Target struct {
	// External is false for the embedded local cluster with the Flink simulator, true for $KUBECONFIG's.
	External   bool
	Kubeconfig string
	// Install installs (or upgrades) the operator from the chart before the tests; false uses the
	// operator already there.
	Install bool
	// OperatorImage and FlinkURLMode are the chart's image and config.flinkUrlMode.
	OperatorImage string
	FlinkURLMode  string
	Namespace     string
	// HelmValues is a values file of the user's, applied over the suite's.
	HelmValues string

	// What the test applications run.
	FlinkImage   string
	Jar          string
	EntryClass   string
	FlinkVersion string
	// StateVolume gives each test namespace a PersistentVolumeClaim for savepoints and checkpoints,
	// of StorageClass ("" for the default). The simulator keeps them in its own shared storage.
	StateVolume  bool
	StorageClass string

	// WaitTimeout bounds each wait for the operator: real Flink pulls images, starts JVMs and takes
	// savepoints far slower than the simulator.
	WaitTimeout time.Duration
}

// String says what the suite runs against, for its first line of output.
func (t Target) String() string {
	if !t.External {
		return "the embedded local cluster with the Flink simulator"
	}
	op := "the operator already installed"
	if t.Install {
		op = fmt.Sprintf("the operator %s installed from the chart into %s (flinkUrlMode %s)", t.OperatorImage, t.Namespace, t.FlinkURLMode)
	}
	return fmt.Sprintf("the cluster of KUBECONFIG=%s, %s, applications of %s running %s", t.Kubeconfig, op, t.FlinkImage, t.Jar)
}

// SelectTarget chooses the target from the environment (getenv is os.Getenv in the suite): the
// local cluster unless FLINKFSM_EXTERNAL is set.
func SelectTarget(getenv func(string) string) (Target, error) {
	external, err := boolEnv(getenv, EnvExternal)
	if err != nil {
		return Target{}, err
	}
	t := Target{
		FlinkImage:   or(getenv(EnvFlinkImage), DefaultFlinkImage),
		Jar:          or(getenv(EnvJar), DefaultJar),
		EntryClass:   or(getenv(EnvEntryClass), DefaultEntryClass),
		FlinkVersion: DefaultFlinkVersion,
		WaitTimeout:  60 * time.Second,
	}
	if !external {
		// The simulator runs any image and jar; the local environment installs the operator itself.
		return t, nil
	}
	t.External = true
	t.WaitTimeout = 5 * time.Minute
	t.StateVolume = true
	t.StorageClass = getenv(EnvStorageClass)
	if t.Kubeconfig = getenv(EnvKubeconfig); t.Kubeconfig == "" {
		return Target{}, fmt.Errorf("%s=1 runs the suite against the cluster of $%s, which is not set: "+
			"point %s at the cluster's kubeconfig (kind: `kind get kubeconfig --name flinkfsm > /tmp/kind.kubeconfig`)",
			EnvExternal, EnvKubeconfig, EnvKubeconfig)
	}
	skip, err := boolEnv(getenv, EnvSkipInstall)
	if err != nil {
		return Target{}, err
	}
	t.Install = !skip
	t.Namespace = or(getenv(EnvNamespace), DefaultNamespace)
	t.HelmValues = getenv(EnvHelmValues)
	t.OperatorImage = or(getenv(EnvOperatorImage), DefaultOperatorImage)
	if _, _, err := splitImage(t.OperatorImage); err != nil {
		return Target{}, fmt.Errorf("%s: %w", EnvOperatorImage, err)
	}
	t.FlinkURLMode = or(getenv(EnvFlinkURLMode), DefaultFlinkURLMode)
	switch t.FlinkURLMode {
	case "APIServerProxy", "ServiceDNS":
	default:
		return Target{}, fmt.Errorf("%s=%q: want APIServerProxy or ServiceDNS (Template needs a URL the suite cannot know)", EnvFlinkURLMode, t.FlinkURLMode)
	}
	return t, nil
}

// boolEnv reads a boolean environment variable: empty, 0 or false is off; 1 or true is on.
func boolEnv(getenv func(string) string, name string) (bool, error) {
	switch v := strings.ToLower(strings.TrimSpace(getenv(name))); v {
	case "", "0", "false":
		return false, nil
	case "1", "true":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: want 1 or 0", name, v)
	}
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// splitImage splits repository[:tag] into the chart's image.repository and image.tag; a registry's
// port is part of the repository. Digests are not supported: kind loads images by tag.
func splitImage(image string) (repository, tag string, err error) {
	if image == "" || strings.ContainsAny(image, " @") {
		return "", "", fmt.Errorf("%q is not an image repository[:tag]", image)
	}
	repository, tag = image, "latest"
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		repository, tag = image[:i], image[i+1:]
	}
	if repository == "" || tag == "" {
		return "", "", fmt.Errorf("%q is not an image repository[:tag]", image)
	}
	return repository, tag, nil
}

// ChartValues are the values the suite installs the chart with: the operator image (loaded into
// the cluster, so never pulled when present), how it reaches Flink, and intervals that fit a test
// run rather than production. Everything else is the chart's default (two replicas with leader
// election, cluster-wide RBAC, the admission policy).
func (t Target) ChartValues() (map[string]any, error) {
	repository, tag, err := splitImage(t.OperatorImage)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"image": map[string]any{"repository": repository, "tag": tag, "pullPolicy": "IfNotPresent"},
		"config": map[string]any{
			"flinkUrlMode":           t.FlinkURLMode,
			"waitPollInterval":       "1s",
			"statusPollInterval":     "5s",
			"jobStabilizationPeriod": "10s",
			"maxBackoffDuration":     "10s",
		},
	}, nil
}

// HelmInstallArgs are the arguments of hack/helm.sh that install or upgrade the operator from the
// chart with the values in valuesFile (then the user's HelmValues), waiting until its Deployment is available.
func (t Target) HelmInstallArgs(chartDir, valuesFile string) []string {
	args := []string{"upgrade", "--install", ReleaseName, chartDir, "--namespace", t.Namespace, "--create-namespace",
		"-f", valuesFile}
	if t.HelmValues != "" {
		args = append(args, "-f", t.HelmValues)
	}
	return append(args, "--wait", "--timeout", "5m")
}

// AppSpec is the spec every test application starts from: the target's image and jar, parallelism
// 1 on TaskManagers of two slots, deleteMode ForceCancel (tests of deletion choose theirs). Against
// real Flink the pods get the memory Flink needs, and savepoints and checkpoints go to the
// namespace's state volume; the simulator keeps them in its own storage and needs no memory.
func (t Target) AppSpec() v1beta1.FlinkApplicationSpec {
	slots := int32(2)
	spec := v1beta1.FlinkApplicationSpec{
		ClusterSpec: v1beta1.ClusterSpec{
			Image:        t.FlinkImage,
			FlinkVersion: t.FlinkVersion,
			FlinkConfig: v1beta1.FlinkConfig{
				"state.savepoints.dir":  "file:///flink/savepoints",
				"state.checkpoints.dir": "file:///flink/checkpoints",
				"web.upload.dir":        FlinkUploadDir,
			},
		},
		JarName:           t.Jar,
		EntryClass:        t.EntryClass,
		Parallelism:       1,
		DeleteMode:        v1beta1.DeleteModeForceCancel,
		TaskManagerConfig: v1beta1.TaskManagerConfig{TaskSlots: &slots},
	}
	if !t.External {
		small := &corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}
		spec.JobManagerConfig.Resources, spec.TaskManagerConfig.Resources = small, small
		return spec
	}
	// Flink's process sizes come from the containers' memory less systemMemoryFraction: 1 GiB for
	// the JobManager, 1.2 GiB for the TaskManager (the least its defaults fit in, with two slots).
	fraction := 0.2
	spec.JobManagerConfig.SystemMemoryFraction, spec.TaskManagerConfig.SystemMemoryFraction = &fraction, &fraction
	spec.JobManagerConfig.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("1280Mi")}}
	spec.TaskManagerConfig.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("1536Mi")}}
	if t.StateVolume {
		spec.FlinkConfig["state.savepoints.dir"] = "file://" + StateMountPath + "/savepoints"
		spec.FlinkConfig["state.checkpoints.dir"] = "file://" + StateMountPath + "/checkpoints"
		spec.Volumes = []corev1.Volume{{Name: "state", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: StateVolumeClaim}}}}
		spec.VolumeMounts = []corev1.VolumeMount{{Name: "state", MountPath: StateMountPath}}
	}
	return spec
}

// StateClaim is the PersistentVolumeClaim of StateVolume in a test namespace. ReadWriteOnce suits
// kind's local-path provisioner: every pod that mounts it is scheduled onto the volume's node.
func (t Target) StateClaim(namespace string) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{}
	pvc.Name, pvc.Namespace = StateVolumeClaim, namespace
	pvc.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	pvc.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
	if t.StorageClass != "" {
		class := t.StorageClass
		pvc.Spec.StorageClassName = &class
	}
	return pvc
}
