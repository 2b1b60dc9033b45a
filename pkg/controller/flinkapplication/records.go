package flinkapplication

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// status.deployments holds two explicit records: the stable deployment (what runs, and what a
// failed update returns to) and the candidate (what is being deployed). Handlers read and change
// them; the fields the Lyft operator's users read are derived from them once per pass (deriveStatus).

// forcedRollback tells whether the user asked to abandon the update in progress. Restarts and
// recoveries of the running spec are not updates: a forceRollback left set does not stop them.
func forcedRollback(rc *Context) bool {
	st := rc.Job
	return rc.App != nil && rc.App.Spec.ForceRollback && jobstate.Stable(st) != nil && jobstate.Updating(st) && jobstate.TargetSpecHash(st) != jobstate.RunningSpecHash(st)
}

// recordTarget records the spec about to be deployed as the candidate, before anything is done for
// it, so that the job is submitted as that spec says even if the spec changes again meanwhile. The
// candidate gets a cluster of its own unless the caller then says otherwise.
func recordTarget(rc *Context) {
	b, _ := json.Marshal(rc.App.Spec)
	rc.Job.Deployments.Candidate = &v1beta1.DeploymentRecord{
		Kind: v1beta1.DeploymentUpdate, SpecHash: rc.Hash, Spec: string(b), ClusterHash: rc.Hash,
	}
}

// deriveStatus writes the fields the Lyft operator's users read from the records and the ledger:
// the live cluster, the spec in progress, the job the application runs now, the savepoint in
// progress, the savepoint the next job starts from (never a checkpoint), the savepoints taken and
// the job's last recorded checkpoint.
func deriveStatus(app *v1beta1.FlinkApplicationStatus) {
	st := &app.JobOwnerStatus
	app.DeployHash, app.UpdatingHash = jobstate.LiveCluster(st), jobstate.TargetSpecHash(st)
	app.SavepointTriggerID = jobstate.DeriveJobStatus(st)
}

// migrateStatus builds the records from status written by operator versions before them, which kept
// the same facts in hash fields, lastStableSpec and updatingSpec.
func migrateStatus(rc *Context) {
	migrateScalingTarget(rc)
	if p := rc.App.Status.Phase; p != "" && p.Normalized() != p {
		// Written by the Lyft operator: the same phase under its name.
		rc.App.Status.Phase = p.Normalized()
	}
	st := &rc.App.Status
	d := &st.Deployments
	if d.Stable != nil || d.Candidate != nil || st.DeployHash == "" && st.UpdatingHash == "" {
		return
	}
	js := st.JobStatus
	old := st.LastStableSpec
	if st.DeployHash != "" {
		d.Stable = &v1beta1.DeploymentRecord{SpecHash: st.DeployHash, ClusterHash: st.DeployHash, RestorePath: js.RestorePath}
		if old != nil {
			d.Stable.SpecHash, d.Stable.Spec, d.Stable.RestorePath = old.SpecHash, old.Spec, old.RestorePath
			t := old.StableTime
			d.Stable.StableTime = &t
		}
	}
	if st.UpdatingHash != "" {
		c := &v1beta1.DeploymentRecord{Kind: v1beta1.DeploymentUpdate, SpecHash: st.UpdatingHash, Spec: st.UpdatingSpec, ClusterHash: st.UpdatingHash}
		if st.InPlaceUpdatedFromHash != "" {
			c.ClusterHash = st.InPlaceUpdatedFromHash
			if d.Stable != nil && st.UpdatingHash == d.Stable.SpecHash {
				c.Kind = v1beta1.DeploymentRestart
			}
		}
		d.Candidate = c
	}
	// The recorded job is the stable one unless it runs on the candidate's cluster and is not the
	// job that ran stable.
	if js.JobID != "" {
		c := d.Candidate
		stableJob := old != nil && old.JobID == js.JobID
		onCandidate := c != nil && js.ClusterHash == c.ClusterHash && (js.ClusterHash != st.DeployHash || old != nil && !stableJob)
		switch {
		case onCandidate:
			c.JobID = js.JobID
		case d.Stable != nil && (js.ClusterHash == "" || js.ClusterHash == st.DeployHash):
			d.Stable.JobID = js.JobID
		}
	}
	if st.SavepointTriggerID != "" && d.Stable != nil {
		// The trigger time was not recorded: the savepoint is followed by its id only.
		d.Stable.Savepoint = &v1beta1.SavepointTrigger{TriggerID: st.SavepointTriggerID, Time: metav1.NewTime(rc.Now)}
	}
	if writtenByLyft(st) {
		// The Lyft operator hashes specs its own way, so its hashes name clusters, not specs this
		// operator can compare with: the spec it runs or deploys is the spec as it is. Without this a
		// switch of operators would redeploy every application.
		b, _ := json.Marshal(rc.App.Spec)
		for _, r := range []*v1beta1.DeploymentRecord{d.Candidate, d.Stable} {
			if r != nil && (r == d.Candidate || d.Candidate == nil && Phase(st.Phase).Normalized() == PhaseRunning) {
				r.SpecHash, r.Spec = rc.Hash, string(b)
			}
		}
	}
	st.LastStableSpec, st.UpdatingSpec, st.InPlaceUpdatedFromHash = nil, "", ""
}

// blueGreen tells whether the application runs BlueGreen versions.
func blueGreen(app *v1beta1.FlinkApplication) bool {
	return deploymentMode(app) == v1beta1.DeploymentModeBlueGreen
}

// versionOf is the BlueGreen colour of the deployment on the cluster with this hash; "" outside
// BlueGreen.
func versionOf(st *v1beta1.FlinkApplicationStatus, hash string) v1beta1.FlinkApplicationVersion {
	for _, r := range []*v1beta1.DeploymentRecord{jobstate.Candidate(&st.JobOwnerStatus), jobstate.Stable(&st.JobOwnerStatus)} {
		if r != nil && r.ClusterHash == hash && r.Version != "" {
			return r.Version
		}
	}
	return ""
}

// nextVersion is the colour of a new BlueGreen version: green first, as the Lyft operator does,
// then the colour the deployed version does not have.
func nextVersion(st *v1beta1.FlinkApplicationStatus) v1beta1.FlinkApplicationVersion {
	if s := jobstate.Stable(&st.JobOwnerStatus); s != nil && s.Version == v1beta1.GreenFlinkApplication {
		return v1beta1.BlueFlinkApplication
	}
	return v1beta1.GreenFlinkApplication
}

// dualRunning tells whether two BlueGreen versions' jobs are recorded: the deployed one and the
// candidate that ran stable beside it.
func dualRunning(st *v1beta1.FlinkApplicationStatus) bool {
	s, c := jobstate.Stable(&st.JobOwnerStatus), jobstate.Candidate(&st.JobOwnerStatus)
	return s != nil && c != nil && s.JobID != "" && c.JobID != "" && c.StableTime != nil
}

// writtenByLyft tells whether status was written by the Lyft operator: this operator always writes
// its conditions and the upgrade mode in effect, and once a job ran, lastStableSpec or the records.
func writtenByLyft(st *v1beta1.FlinkApplicationStatus) bool {
	return len(st.Conditions) == 0 && st.UpgradeMode == "" && st.LastStableSpec == nil
}

// jobSettings are what the job handlers read of an object's spec (jobstate.Settings).
type jobSettings = jobstate.Settings

// applicationSettings are a FlinkApplication's job settings.
func applicationSettings(app *v1beta1.FlinkApplication) *jobSettings {
	s := &app.Spec
	return &jobSettings{
		UpgradeMode: upgradeMode(app), Suspend: s.State == v1beta1.JobStateSuspended, DeleteMode: deleteModeOr(s.DeleteMode),
		InitialSavepoint: jobstate.InitialSavepoint(app), RestoreSnapshot: s.RestoreSnapshot, RestartFailedJob: s.RestartFailedJob, FallbackWithoutState: s.FallbackWithoutState,
		MaxCheckpointRestoreAgeSeconds: s.MaxCheckpointRestoreAgeSeconds, ReadinessTimeoutSeconds: s.ReadinessTimeoutSeconds,
		SavepointTriggerNonce: s.SavepointTriggerNonce, CheckpointTriggerNonce: s.CheckpointTriggerNonce, RedeployNonce: s.SavepointRedeployNonce, RedeployFrom: s.SavepointPath,
		PeriodicSavepoint: s.PeriodicSavepoint, PeriodicCheckpoint: s.PeriodicCheckpoint, SavepointFormatType: s.SavepointFormatType,
		SavepointRetention: s.SavepointRetention, FlinkConfig: s.FlinkConfig,
		Field: func(name string) string { return "spec." + name },
	}
}

func deleteModeOr(m v1beta1.DeleteMode) v1beta1.DeleteMode {
	if m == "" {
		return v1beta1.DeleteModeSavepoint
	}
	return m
}

func deploymentMode(app *v1beta1.FlinkApplication) v1beta1.DeploymentMode {
	if app.Spec.DeploymentMode == "" {
		return v1beta1.DeploymentModeDual
	}
	return app.Spec.DeploymentMode
}

// restoreByHand says how the user names the state a job starts from when the restore policy cannot
// choose it: with a new savepointRedeployNonce, from the state spec.savepointPath names.
func restoreByHand(rc *Context) string {
	return fmt.Sprintf("name the state to start from by hand (spec.savepointPath, with a new %s)", rc.Settings.Field("savepointRedeployNonce"))
}
