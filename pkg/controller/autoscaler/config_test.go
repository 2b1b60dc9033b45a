package autoscaler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTheDefaultsAreValid(t *testing.T) {
	require.NoError(t, DefaultConfig().Validate())
}

func TestValidateNamesTheBadField(t *testing.T) {
	for _, tc := range []struct {
		field string
		bad   func(*Config)
	}{
		{"targetUtilization", func(c *Config) { c.TargetUtilization = 1.2 }},
		{"targetUtilization", func(c *Config) { c.TargetUtilization = 0 }},
		{"utilizationTolerance", func(c *Config) { c.UtilizationTolerance = 0.7 }},
		{"catchUpDuration", func(c *Config) { c.CatchUpDuration = 0 }},
		{"metricsWindow", func(c *Config) { c.MetricsWindow = 0 }},
		{"stabilizationInterval", func(c *Config) { c.StabilizationInterval = -time.Second }},
		{"scaleDownDelay", func(c *Config) { c.ScaleDownDelay = -time.Second }},
		{"maxScaleUpFactor", func(c *Config) { c.MaxScaleUpFactor = 0.5 }},
		{"maxScaleDownFactor", func(c *Config) { c.MaxScaleDownFactor = 0 }},
		{"alignmentMargin", func(c *Config) { c.AlignmentMargin = -0.1 }},
		{"minParallelism", func(c *Config) { c.MinParallelism = 0 }},
		{"maxParallelism", func(c *Config) { c.MinParallelism, c.MaxParallelism = 4, 2 }},
		{"coolDown", func(c *Config) { c.CoolDown = -time.Second }},
		{"readinessTimeout", func(c *Config) { c.ReadinessTimeout = 0 }},
		{"vertices[Window]", func(c *Config) { c.Vertices = map[string]VertexLimits{"Window": {Min: 8, Max: 4}} }},
		{"vertices[Window]", func(c *Config) { c.MaxParallelism = 4; c.Vertices = map[string]VertexLimits{"Window": {Min: 8}} }},
		{"vertices[Window].max", func(c *Config) { c.Vertices = map[string]VertexLimits{"Window": {Max: -1}} }},
	} {
		t.Run(tc.field, func(t *testing.T) {
			c := DefaultConfig()
			tc.bad(&c)
			err := c.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.field)
		})
	}
}
