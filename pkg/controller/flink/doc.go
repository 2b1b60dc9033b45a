// Package flink renders the Kubernetes objects of the Flink clusters of a FlinkApplication or a
// FlinkSessionCluster: two Deployments (JobManager, TaskManagers) and two Services per cluster, plus
// the Flink configuration the pods start with. Everything here is a pure function of a ClusterOwner,
// the value each kind builds of itself (the FlinkApplication forms of the functions build it for the
// caller); creating, updating and deleting the objects is the controller's job.
//
// # Clusters are named by a hash
//
// Each cluster's objects are named after ClusterHash, a hash of the spec fields that shape the cluster
// or the job. An update that changes any of them makes a new cluster beside the old one, which is what
// lets the operator take a savepoint on the old job, start the new one and roll back if it fails.
// Unlike Lyft's operator, the hash covers the spec only, not the rendered objects, so that neither
// kubectl apply (which rewrites the last-applied-configuration annotation) nor an operator upgrade
// that renders objects differently redeploys every application.
//
// # The image's entrypoint must apply FLINK_PROPERTIES
//
// The rendered configuration reaches Flink through the FLINK_PROPERTIES environment variable (and
// OPERATOR_FLINK_CONFIG, for images written for Lyft's operator). The official Flink images append it
// to the configuration file and expand environment variables in it, which the $HOST_IP values rely on.
package flink
