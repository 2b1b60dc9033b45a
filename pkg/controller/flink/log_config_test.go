package flink

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A logging configuration is a ConfigMap of the cluster, named after its hash, whose files are
// mounted over the image's of the same name in both components' main containers; without one,
// nothing is rendered and the hash is what it was.
func TestALoggingConfigurationIsMountedFromTheClustersConfigMap(t *testing.T) {
	app := testApp()
	before := ClusterHash(app)
	none, err := RenderCluster(app, before, "")
	require.NoError(t, err)
	assert.Nil(t, none.LogConfig)
	for _, v := range none.JobManager.Spec.Template.Spec.Volumes {
		assert.NotEqual(t, logConfigVolume, v.Name)
	}

	app.Spec.LogConfiguration = map[string]string{"log4j-console.properties": "rootLogger.level = DEBUG\n"}
	hash := ClusterHash(app)
	assert.NotEqual(t, before, hash, "a new logging configuration starts a new cluster")
	c, err := RenderCluster(app, hash, "")
	require.NoError(t, err)
	require.NotNil(t, c.LogConfig)
	assert.Equal(t, LogConfigName(app.Name, hash), c.LogConfig.Name)
	assert.Equal(t, app.Spec.LogConfiguration, c.LogConfig.Data)
	assert.Equal(t, hash, c.LogConfig.Labels[HashLabel])
	assert.Len(t, c.LogConfig.OwnerReferences, 1)
	for _, d := range []string{"jobmanager", "taskmanager"} {
		spec := c.JobManager.Spec.Template.Spec
		if d == "taskmanager" {
			spec = c.TaskManager.Spec.Template.Spec
		}
		var mounted bool
		for _, m := range spec.Containers[0].VolumeMounts {
			if m.Name == logConfigVolume {
				mounted = true
				assert.Equal(t, FlinkConfDir+"/log4j-console.properties", m.MountPath, d)
				assert.Equal(t, "log4j-console.properties", m.SubPath, d)
				assert.True(t, m.ReadOnly, d)
			}
		}
		assert.True(t, mounted, d)
		var vol bool
		for _, v := range spec.Volumes {
			if v.Name == logConfigVolume {
				vol = v.ConfigMap != nil && v.ConfigMap.Name == c.LogConfig.Name
			}
		}
		assert.True(t, vol, d)
	}
	require.NoError(t, PodPolicy{}.Check(app), "a configMap volume is within the pod policy")
}
