package flinkapplication

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Without the admission policy installed, the operator itself refuses pods beyond the namespace's
// policy, naming the field, before it creates anything.
func TestTheOperatorAppliesThePodPolicyItself(t *testing.T) {
	w := newWorld(t)
	app := wordcount("wc")
	app.Spec.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
	w.create(app)
	failed := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	assert.Contains(t, failed.Status.Reason, "spec.volumes[0]: hostPath volume root is not allowed")
	assert.Empty(t, w.jms, "no cluster was started")
}

// A Secret reference that nothing checked against its writer is refused by the operator, naming the
// field; where its configuration says the admission policy enforces (the policy asked the writer's
// authorizer), the operator trusts it (issue 25 item 9).
func TestASecretReferenceIsRunOnlyWhereTheAdmissionPolicyCheckedItsWriter(t *testing.T) {
	for _, enforced := range []bool{false, true} {
		w := newWorld(t)
		w.env.Config.AdmissionPolicyEnforced = enforced
		app := wordcount("wc")
		app.Spec.JobManagerConfig.EnvConfig.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "db"}}}}
		w.create(app)
		if !enforced {
			failed := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
			assert.Contains(t, failed.Status.Reason, "spec.jobManagerConfig.envConfig.envFrom[0].secretRef.name")
			assert.Empty(t, w.jms, "no cluster was started")
			continue
		}
		w.runUntilPhase("wc", v1beta1.PhaseRunning)
	}
}
