package flink

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

func TestCheckpointSurvivalFollowsRetentionAndInterval(t *testing.T) {
	app := func(conf v1beta1.FlinkConfig) *v1beta1.FlinkApplication {
		return &v1beta1.FlinkApplication{Spec: v1beta1.FlinkApplicationSpec{ClusterSpec: v1beta1.ClusterSpec{FlinkConfig: conf}}}
	}
	for _, c := range []struct {
		conf v1beta1.FlinkConfig
		want time.Duration
		ok   bool
	}{
		{v1beta1.FlinkConfig{}, math.MaxInt64, true},
		{v1beta1.FlinkConfig{CheckpointIntervalKey: "10s"}, 0, true},
		{v1beta1.FlinkConfig{CheckpointIntervalKey: "10 s", RetainedCheckpointsKey: "7"}, time.Minute, true},
		{v1beta1.FlinkConfig{CheckpointIntervalKey: "30000", RetainedCheckpointsKey: 3}, time.Minute, true},
		{v1beta1.FlinkConfig{CheckpointIntervalKey: "1 min", RetainedCheckpointsKey: "x"}, 0, false},
		{v1beta1.FlinkConfig{CheckpointIntervalKey: "soon"}, 0, false},
	} {
		got, ok := CheckpointSurvival(app(c.conf))
		assert.Equal(t, c.ok, ok, "%v", c.conf)
		assert.Equal(t, c.want, got, "%v", c.conf)
	}
}
