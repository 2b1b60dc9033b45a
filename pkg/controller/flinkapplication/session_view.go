package flinkapplication

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// The application views of the session kinds (see kinds.go) and the way back to their own status.

// sessionClusterView is a FlinkSessionCluster as the application whose cluster it describes: the
// same cluster-shaping fields, and a parallelism of replicas × slots, so that the rendered cluster
// has replicas TaskManagers.
func sessionClusterView(c *v1beta1.FlinkSessionCluster) *v1beta1.FlinkApplication {
	app := &v1beta1.FlinkApplication{ObjectMeta: *c.ObjectMeta.DeepCopy()}
	app.APIVersion, app.Kind = v1beta1.SchemeGroupVersion.String(), sessionClusterKindName
	s, cs := &app.Spec, c.Spec.DeepCopy()
	s.Image, s.ImagePullPolicy, s.ImagePullSecrets = cs.Image, cs.ImagePullPolicy, cs.ImagePullSecrets
	s.ServiceAccountName, s.SecurityContext, s.RestartNonce = cs.ServiceAccountName, cs.SecurityContext, cs.RestartNonce
	s.FlinkConfig, s.FlinkVersion = cs.FlinkConfig, cs.FlinkVersion
	s.JobManagerConfig, s.TaskManagerConfig = cs.JobManagerConfig, cs.TaskManagerConfig.TaskManagerConfig
	s.RPCPort, s.BlobPort, s.QueryPort, s.UIPort, s.MetricsQueryPort = cs.RPCPort, cs.BlobPort, cs.QueryPort, cs.UIPort, cs.MetricsQueryPort
	s.Volumes, s.VolumeMounts = cs.Volumes, cs.VolumeMounts
	replicas := int32(1)
	if r := cs.TaskManagerConfig.Replicas; r != nil && *r > 0 {
		replicas = *r
	}
	// In int64: a product past an int32 would wrap. It is clamped here and refused before deploy
	// (sessionClusterSpecError), naming the field.
	s.Parallelism = int32(min(int64(replicas)*int64(flink.TaskSlots(app)), math.MaxInt32))

	in, out := &c.Status, &app.Status
	out.Phase, out.MachineStatus, out.ClusterOwnerStatus = v1beta1.FlinkApplicationPhase(in.Phase), in.MachineStatus, in.ClusterOwnerStatus
	for _, h := range in.History {
		out.History = append(out.History, v1beta1.PhaseTransition{From: v1beta1.FlinkApplicationPhase(h.From),
			To: v1beta1.FlinkApplicationPhase(h.To), Time: h.Time, Reason: h.Reason})
	}
	return app
}

// sessionClusterStatus is the FlinkSessionCluster status the view's status stands for; jobs are
// the jobs placed on the cluster.
func sessionClusterStatus(view *v1beta1.FlinkApplication, jobs []v1beta1.SessionJobReference) v1beta1.FlinkSessionClusterStatus {
	in := view.Status.DeepCopy()
	out := v1beta1.FlinkSessionClusterStatus{Phase: v1beta1.FlinkSessionClusterPhase(in.Phase), MachineStatus: in.MachineStatus,
		ClusterOwnerStatus: in.ClusterOwnerStatus, Jobs: jobs}
	for _, h := range in.History {
		out.History = append(out.History, v1beta1.SessionClusterPhaseTransition{From: v1beta1.FlinkSessionClusterPhase(h.From),
			To: v1beta1.FlinkSessionClusterPhase(h.To), Time: h.Time, Reason: h.Reason})
	}
	return out
}

// sessionJobView is a FlinkSessionJob as an application whose job is the session job's. Its Flink
// configuration is the cluster's with the job's own over it: both decide, for example, whether a
// cancel keeps the job's checkpoints.
func sessionJobView(job *v1beta1.FlinkSessionJob, cluster *v1beta1.FlinkSessionCluster) *v1beta1.FlinkApplication {
	app := &v1beta1.FlinkApplication{ObjectMeta: *job.ObjectMeta.DeepCopy()}
	app.APIVersion, app.Kind = v1beta1.SchemeGroupVersion.String(), sessionJobKindName
	j, s := job.Spec.Job, &app.Spec
	s.EntryClass, s.AllowNonRestoredState, s.RestartNonce = j.EntryClass, j.AllowNonRestoredState, j.RestartNonce
	s.FallbackWithoutState, s.RestartFailedJob = j.FallbackWithoutState, j.RestartFailedJob
	s.SavepointTriggerNonce, s.PeriodicSavepoint, s.SavepointRetention = j.SavepointTriggerNonce, j.PeriodicSavepoint, j.SavepointRetention
	if j.Parallelism != nil {
		s.Parallelism = *j.Parallelism
	}
	s.UpgradeMode = j.UpgradeMode
	if s.UpgradeMode == "" {
		s.UpgradeMode = v1beta1.UpgradeModeSavepoint
	}
	s.State, s.SavepointPath, s.DeleteMode = j.State, j.InitialSavepointPath, job.Spec.DeleteMode
	s.FlinkConfig = v1beta1.FlinkConfig{}
	if cluster != nil {
		for k, v := range *cluster.Spec.FlinkConfig.DeepCopy() {
			s.FlinkConfig[k] = v
		}
		s.FlinkVersion = cluster.Spec.FlinkVersion
	}
	for k, v := range *job.Spec.FlinkConfig.DeepCopy() {
		s.FlinkConfig[k] = v
	}

	in, out := job.Status.DeepCopy(), &app.Status
	out.Phase, out.MachineStatus, out.JobOwnerStatus = v1beta1.FlinkApplicationPhase(in.Phase), in.MachineStatus, in.JobOwnerStatus
	for _, h := range in.History {
		out.History = append(out.History, v1beta1.PhaseTransition{From: v1beta1.FlinkApplicationPhase(h.From),
			To: v1beta1.FlinkApplicationPhase(h.To), Time: h.Time, Reason: h.Reason})
	}
	return app
}

// sessionJobStatus is the FlinkSessionJob status the view's status stands for.
func sessionJobStatus(view *v1beta1.FlinkApplication) v1beta1.FlinkSessionJobStatus {
	in := view.Status.DeepCopy()
	out := v1beta1.FlinkSessionJobStatus{Phase: v1beta1.FlinkSessionJobPhase(in.Phase), MachineStatus: in.MachineStatus,
		JobOwnerStatus: in.JobOwnerStatus}
	for _, h := range in.History {
		out.History = append(out.History, v1beta1.SessionJobPhaseTransition{From: v1beta1.FlinkSessionJobPhase(h.From),
			To: v1beta1.FlinkSessionJobPhase(h.To), Time: h.Time, Reason: h.Reason})
	}
	return out
}

// sessionJobHash identifies what a session job runs: its jar, entry class, arguments, parallelism,
// its own Flink configuration and the restart nonce. The upgrade mode, the desired state, the
// initial savepoint and the delete mode only say how to get there, and changing them restarts nothing.
func sessionJobHash(job *v1beta1.FlinkSessionJob) string {
	j := job.Spec.Job
	b, _ := json.Marshal(struct {
		JarURI, JarSHA256, EntryClass, RestartNonce string
		Args                                        []string
		Parallelism                                 *int32
		AllowNonRestoredState                       bool
		FlinkConfig                                 v1beta1.FlinkConfig
	}{j.JarURI, j.JarSHA256, j.EntryClass, j.RestartNonce, j.Args, j.Parallelism, j.AllowNonRestoredState, job.Spec.FlinkConfig})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:8]
}
