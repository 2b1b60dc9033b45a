//go:build linux

// Package localcluster runs a real Kubernetes control plane (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler) plus kwok-simulated nodes as plain local processes.
//
// Our machines cannot run Docker, yet the operator must be tested against a real API server with
// real controllers (garbage collection, Deployments, scheduling). Every component binds to
// 127.0.0.1 on a free port, runs in its own process group and dies with the test process, so
// clusters can run side by side and never outlive the test that started them.
//
// The package is Linux-only: it relies on Pdeathsig and /proc to guarantee clean-up and to prove
// that a listening port belongs to the process it started.
package localcluster
