package clusters

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The explorer (seed 2062) found the autoscaler's apply path asking how many TaskManagers a
// cluster runs after its TaskManager Deployment was deleted: the nil Deployment panicked the pass.
func TestAMissingDeploymentRunsNoPods(t *testing.T) {
	assert.Equal(t, int32(0), Replicas(nil))
}
