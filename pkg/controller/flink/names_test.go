package flink

import (
	"testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/stretchr/testify/assert"
)

func TestNames(t *testing.T) {
	app := testApp()
	assert.Equal(t, "wordcount-0a1b2c3d-jm", JobManagerName(app, "0a1b2c3d"))
	assert.Equal(t, "wordcount-0a1b2c3d-tm", TaskManagerName(app, "0a1b2c3d"))
	assert.Equal(t, "wordcount-0a1b2c3d", VersionedServiceName(app, "0a1b2c3d"))
	assert.Equal(t, "wordcount", GenericServiceName(app))
}

func TestTaskManagerReplicas(t *testing.T) {
	tests := []struct {
		parallelism int32
		slots       *int32
		want        int32
	}{
		{3, ptr(int32(2)), 2},
		{4, ptr(int32(2)), 2},
		{5, ptr(int32(2)), 3},
		{1, ptr(int32(16)), 1},
		{1, nil, 1},
		{16, nil, 1},
		{17, nil, 2},
		{0, nil, 1},
	}
	for _, tt := range tests {
		app := &v1beta1.FlinkApplication{Spec: v1beta1.FlinkApplicationSpec{
			Parallelism:       tt.parallelism,
			TaskManagerConfig: v1beta1.TaskManagerConfig{TaskSlots: tt.slots},
		}}
		assert.Equal(t, tt.want, TaskManagerReplicas(app), "parallelism %d slots %v", tt.parallelism, tt.slots)
	}
}

func TestDefaults(t *testing.T) {
	app := &v1beta1.FlinkApplication{}
	assert.Equal(t, int32(16), TaskSlots(app))
	assert.Equal(t, int32(1), JobManagerReplicas(app))
	assert.Equal(t, []int32{6123, 6125, 6124, 8081, 50101},
		[]int32{RPCPort(app), BlobPort(app), QueryPort(app), UIPort(app), MetricsQueryPort(app)})

	app.Spec.RPCPort, app.Spec.BlobPort, app.Spec.QueryPort = ptr(int32(1)), ptr(int32(2)), ptr(int32(3))
	app.Spec.UIPort, app.Spec.MetricsQueryPort = ptr(int32(4)), ptr(int32(5))
	app.Spec.JobManagerConfig.Replicas = ptr(int32(2))
	assert.Equal(t, []int32{1, 2, 3, 4, 5},
		[]int32{RPCPort(app), BlobPort(app), QueryPort(app), UIPort(app), MetricsQueryPort(app)})
	assert.Equal(t, int32(2), JobManagerReplicas(app))
}
