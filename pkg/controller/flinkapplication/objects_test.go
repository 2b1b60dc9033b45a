package flinkapplication

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

// appNamed is an application as the API server stores it: namespace, uid and kind set.
func appNamed(name string) *v1beta1.FlinkApplication {
	app := wordcount(name)
	app.Namespace, app.UID = ns, types.UID("uid-"+name)
	app.APIVersion, app.Kind = v1beta1.SchemeGroupVersion.String(), "FlinkApplication"
	return app
}

// jobManagerPod is a JobManager pod of the application's cluster "abc".
func jobManagerPod(name, app string) *corev1.Pod {
	controller := true
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{
		k8.AppLabel: app, k8.HashLabel: "abc", k8.ComponentLabel: flink.JobManagerComponent,
	}, OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name + "-rs", UID: "rs", Controller: &controller}}}}
}
