package flinkapplication

import (
	"encoding/json"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// upgradeMode is the mode in effect: spec.upgradeMode, or Stateless for the Lyft operator's
// savepointDisabled, which meant "cancel and start without state" there. Reading it as LastState
// would make a Lyft user's job restore checkpoints it never restored before, which can fail a
// deploy whose new job cannot read that state; LastState is one field away.
func upgradeMode(app *v1beta1.FlinkApplication) v1beta1.UpgradeMode {
	switch {
	case app.Spec.UpgradeMode != "":
		return app.Spec.UpgradeMode
	case app.Spec.SavepointDisabled:
		return v1beta1.UpgradeModeStateless
	}
	return v1beta1.UpgradeModeSavepoint
}

// withSpec is the application as it was with a recorded spec (JSON); nil when there is none or it
// cannot be read.
func withSpec(app *v1beta1.FlinkApplication, specJSON string) *v1beta1.FlinkApplication {
	if specJSON == "" {
		return nil
	}
	out := app.DeepCopy()
	out.Spec = v1beta1.FlinkApplicationSpec{}
	if err := json.Unmarshal([]byte(specJSON), &out.Spec); err != nil {
		return nil
	}
	return out
}

// targetApp is the application as the deployment in progress deploys it.
func targetApp(rc *Context) *v1beta1.FlinkApplication {
	if c := jobstate.Candidate(rc.Job); c != nil {
		if app := withSpec(rc.App, c.Spec); app != nil {
			return app
		}
	}
	return rc.App
}

// deploying is what a pass deploys, read from the records once: the candidate record, the
// application as the record's spec has it (typed, decoded once), and whether its job starts beside
// the deployed version's job (BlueGreen). The steps of a start take it as a value instead of asking
// the records again.
type deploying struct {
	record *v1beta1.DeploymentRecord
	app    *v1beta1.FlinkApplication
	beside bool
}

// deployingNow is the deployment in progress; false when none is.
func deployingNow(rc *Context) (deploying, bool) {
	c := jobstate.Candidate(rc.Job)
	if c == nil {
		return deploying{}, false
	}
	stable := jobstate.Stable(rc.Job)
	return deploying{record: c, app: targetApp(rc), beside: besideLive(rc) && stable != nil && stable.JobID != ""}, true
}

// stableApp is the application as its stable deployment's spec had it; nil before a job ever ran
// stable.
func stableApp(rc *Context) *v1beta1.FlinkApplication {
	if s := jobstate.Stable(rc.Job); s != nil {
		return withSpec(rc.App, s.Spec)
	}
	return nil
}

// specChange is what a difference between the spec and the running job asks for.
type specChange int

const (
	// noChange: the job runs the spec, or the spec is one that already failed and waits for a new one.
	noChange specChange = iota
	// scaleChange: only the parallelism differs and scaleMode is InPlace; the cluster is kept.
	scaleChange
	// upgradeChange: the cluster or the job must be replaced.
	upgradeChange
)

// classifyChange compares the spec with the running job's. Fields outside the cluster hash (see
// flink.ClusterHash) never count: changing them never restarts a job.
func classifyChange(rc *Context) specChange {
	st := &rc.App.Status
	running := jobstate.RunningSpecHash(rc.Job)
	if rc.Hash == running || rc.Hash == st.FailedDeployHash || rc.Hash == st.TeardownHash {
		// A BlueGreen version the user tore down is not deployed again until the spec changes.
		return noChange
	}
	if rc.App.Spec.ScaleMode != v1beta1.ScaleModeInPlace || running == "" {
		return upgradeChange
	}
	stable := stableApp(rc)
	if stable == nil {
		return upgradeChange
	}
	probe := rc.App.DeepCopy()
	probe.Spec.Parallelism = stable.Spec.Parallelism
	if flink.ClusterHash(probe) == running {
		return scaleChange
	}
	return upgradeChange
}
