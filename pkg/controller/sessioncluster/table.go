package sessioncluster

import (
	"fmt"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
)

// table is the FlinkSessionCluster's phase table: a cluster's lifecycle without a job.
var table = map[fsm.Phase]fsm.Spec[*Pass]{
	fsm.PhaseNew: {
		Handle: handleDeploy,
		Exits:  []fsm.Exit{{To: fsm.PhaseClusterStarting, When: "cluster objects created"}},
		GiveUp: func(p *Pass, cause string) fsm.Outcome { return p.DeployFailed("DeployFailed", cause) },
		Poll:   fsm.WaitPoll,
	},
	fsm.PhaseUpdating: {
		Handle: handleDeploy,
		Exits:  []fsm.Exit{{To: fsm.PhaseClusterStarting, When: "the new spec's cluster created beside the running one"}},
		GiveUp: func(p *Pass, cause string) fsm.Outcome { return p.DeployFailed("DeployFailed", cause) },
		Poll:   fsm.WaitPoll,
	},
	fsm.PhaseClusterStarting: {
		Handle: handleStarting,
		Exits: []fsm.Exit{
			{To: fsm.PhaseRunning, When: "cluster ready: jobs are submitted to it and move to it"},
			{To: fsm.PhaseUpdating, When: "spec changed again"},
		},
		Deadline: func(p *Pass) time.Duration { return p.Config.ClusterStartTimeout.Duration },
		Progress: startingClusterProgress,
		GiveUp: func(p *Pass, cause string) fsm.Outcome {
			return p.DeployFailed("ClusterStartFailed", fmt.Sprintf("%s; the running cluster and its jobs are kept", cause))
		},
		Poll: fsm.WaitPoll,
	},
	fsm.PhaseRunning: {
		Handle: handleRunning,
		Exits:  []fsm.Exit{{To: fsm.PhaseUpdating, When: "spec changed"}},
		Poll:   fsm.StatusPoll,
	},
	fsm.PhaseDeployFailed: {
		Handle: handleDeployFailed,
		Exits: []fsm.Exit{
			{To: fsm.PhaseUpdating, When: "spec changed"},
			{To: fsm.PhaseRunning, When: "spec back to the running cluster's"},
		},
		Poll: fsm.StatusPoll,
	},
	fsm.PhaseDeleting: {
		Handle: handleDeleting,
		// Its jobs' deletions wake it.
		Poll: fsm.StatusPoll,
	},
}

// startingClusterProgress is the progress of the cluster a session cluster's new spec starts.
func startingClusterProgress(p *Pass) fsm.Steps { return fsm.Steps(p.Clusters[p.Hash].Steps()) }

// Drawn is what the docs draw of the kind's state machine.
func Drawn() fsm.Drawn[*Pass] {
	listed := make([]string, len(v1beta1.SessionClusterPhases))
	for i, p := range v1beta1.SessionClusterPhases {
		listed[i] = string(p)
	}
	return fsm.Drawn[*Pass]{Table: table, Listed: listed, Global: fsm.GlobalExits,
		EndOfLife: "no FlinkSessionJob names the cluster any more, finalizer removed"}
}
