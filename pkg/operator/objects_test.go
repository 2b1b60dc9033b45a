package operator

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// ns is the namespace the controller's tests create their objects in.
const ns = "jobs"

// wordcount is an application as a user writes one.
func wordcount(name string) *v1beta1.FlinkApplication {
	slots := int32(2)
	return &v1beta1.FlinkApplication{
		ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1},
		Spec: v1beta1.FlinkApplicationSpec{
			ClusterSpec: v1beta1.ClusterSpec{
				Image:        "flink-wordcount:1",
				FlinkVersion: "1.20",
				FlinkConfig: v1beta1.FlinkConfig{
					"state.savepoints.dir":             "file:///checkpoints/savepoints",
					"state.checkpoints.dir":            "file:///checkpoints/checkpoints",
					"execution.checkpointing.interval": "10s",
				},
			},
			JarName: "wordcount.jar", EntryClass: "org.apache.flink.WordCount", Parallelism: 3,
			TaskManagerConfig: v1beta1.TaskManagerConfig{TaskSlots: &slots},
		},
	}
}
