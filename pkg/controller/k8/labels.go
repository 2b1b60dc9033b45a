package k8

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The label keys are Lyft's, so dashboards and kubectl selectors written for Lyft's operator keep working.
const (
	// AppLabel is on every object the operator creates; its value is the application name. It is the
	// key for finding all of an application's objects, whichever cluster they belong to.
	AppLabel = "flink-app"
	// HashLabel names the cluster an object belongs to; its value is the cluster hash.
	HashLabel = "flink-app-hash"
	// ComponentLabel tells the JobManager and TaskManager pods of one cluster apart.
	ComponentLabel = "flink-deployment-type"
)

// HashOf is the cluster hash an object was created for, or "" if it carries none.
func HashOf(obj metav1.Object) string {
	return obj.GetLabels()[HashLabel]
}
