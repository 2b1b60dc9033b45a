package jobstate

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// The state status shows is that of the job it was read of: when the job shown changes (a
// promotion, a rerun), the state read of the job before does not stay as the new job's.
func TestTheJobStateShownGoesWithItsJob(t *testing.T) {
	st := &v1beta1.JobOwnerStatus{}
	st.Deployments.Stable = &v1beta1.DeploymentRecord{JobID: job, ClusterHash: "blue"}
	DeriveJobStatus(st)
	st.JobStatus.State = v1beta1.JobFailed
	DeriveJobStatus(st)
	assert.Equal(t, v1beta1.JobFailed, st.JobStatus.State, "the same job's state stays")

	st.Deployments.Stable = &v1beta1.DeploymentRecord{JobID: otherJob, ClusterHash: "green"}
	DeriveJobStatus(st)
	assert.Equal(t, otherJob, st.JobStatus.JobID)
	assert.Empty(t, st.JobStatus.State, "not read of the new job yet")
}
