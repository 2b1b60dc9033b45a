package flink

import (
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testApp is a typical application as the API server would return it: no TypeMeta, numbers in
// flinkConfig decoded as int64 or float64.
func testApp() *v1beta1.FlinkApplication {
	return &v1beta1.FlinkApplication{
		ObjectMeta: metav1.ObjectMeta{
			Name:      "wordcount",
			Namespace: "flink",
			UID:       "uid-1",
			Labels:    map[string]string{"team": "data"},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/last-applied-configuration": `{"spec":{}}`,
			},
		},
		Spec: v1beta1.FlinkApplicationSpec{
			ClusterSpec: v1beta1.ClusterSpec{
				Image:        "flink-wordcount:1",
				FlinkVersion: "1.20",
				FlinkConfig: v1beta1.FlinkConfig{
					"state.backend.type":                  "rocksdb",
					"execution.checkpointing.interval":    "10s",
					"taskmanager.network.memory.fraction": 0.15,
					"parallelism.default":                 int64(4),
				},
			},
			JarName:     "wordcount.jar",
			EntryClass:  "org.example.WordCount",
			Parallelism: 3,
			TaskManagerConfig: v1beta1.TaskManagerConfig{
				TaskSlots: ptr(int32(2)),
			},
		},
	}
}

func ptr[T any](v T) *T { return &v }

func memoryResources(cpu, memory string) *corev1.ResourceRequirements {
	return &corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse(memory),
	}}
}
