package migrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The Apache kinds are named as kubectl names them: kind, plural, short name, or with the group.
func TestParseObjectTakesKubectlsSpellings(t *testing.T) {
	for arg, want := range map[string]Kind{
		"flinkdeployment/orders": FlinkDeployment, "flinkdeployments/orders": FlinkDeployment, "flinkdep/orders": FlinkDeployment,
		"FlinkDeployment.flink.apache.org/orders": FlinkDeployment,
		"flinksessionjob/orders":                  FlinkSessionJob, "sessionjob/orders": FlinkSessionJob, "flinksessionjobs.flink.apache.org/orders": FlinkSessionJob,
	} {
		kind, name, err := ParseObject(arg)
		assert.NoError(t, err, arg)
		assert.Equal(t, want, kind, arg)
		assert.Equal(t, "orders", name, arg)
	}
	for _, arg := range []string{"orders", "flinkapplication/orders", "flinkdeployment/", "flinkdeployment/a/b"} {
		_, _, err := ParseObject(arg)
		assert.Error(t, err, arg)
	}
}
