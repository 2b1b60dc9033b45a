package sessionjob

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// sessionClusterNotReadyReason is the Ready condition's reason, and the Warning Event's, of a
// session job that has waited for its session cluster longer than a cluster is given to start.
const sessionClusterNotReadyReason = "SessionClusterNotReady"

// sayWaitingForCluster keeps a session job's wait for its session cluster in status. The wait has no
// deadline: the job cannot run anywhere else, and it runs as soon as the cluster does. But past
// clusterStartTimeout, the deadline of a cluster's start, it is no longer a start taking its time,
// and a Warning Event says what it waits for, once (the Ready condition, read back, remembers it).
func sayWaitingForCluster(p *Pass, why string) {
	p.Machine.Reason = "waiting for the session cluster: " + why
	started := p.Machine.PhaseStartedAt
	long := p.Config.ClusterStartTimeout.Duration
	if started == nil || p.Now.Sub(started.Time) <= long {
		return
	}
	p.Waiting = sessionClusterNotReadyReason
	if ready := meta.FindStatusCondition(p.Machine.Conditions, v1beta1.ConditionReady); ready == nil || ready.Reason != sessionClusterNotReadyReason {
		p.Event(true, sessionClusterNotReadyReason, fmt.Sprintf("waiting for the session cluster for more than %s: %s; the job runs once the cluster does", long, why))
	}
}
