package flinkapplication

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// Finalizer holds an object until its deletion dealt with its job and clusters (lifecycle.Finalizer).
const Finalizer = lifecycle.Finalizer

// hasFinalizer tells whether the object carries the operator's finalizer (lifecycle.HasFinalizer).
func hasFinalizer(obj metav1.Object) bool { return lifecycle.HasFinalizer(obj) }
