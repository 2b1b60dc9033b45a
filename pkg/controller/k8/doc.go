// Package k8 holds the small Kubernetes conventions every part of the operator agrees on: the labels
// that tie objects to an application and a cluster, and the owner reference that lets garbage
// collection remove them with the application.
//
// It imports nothing from the controller packages, so any of them can import it.
package k8
