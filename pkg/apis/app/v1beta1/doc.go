// Package v1beta1 is the flink.k8s.io/v1beta1 API: FlinkApplication, a superset of the Lyft operator's
// API so that its users' manifests apply unchanged, and FlinkSessionCluster and FlinkSessionJob, for
// many jobs sharing one cluster.
//
// +k8s:deepcopy-gen=package
// +groupName=flink.k8s.io
package v1beta1
