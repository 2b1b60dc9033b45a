package flink

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The JobManager's Service routes a call as the operator rendered it only while the object controls
// it and its type, external name and selector are the rendered ones; each way a tenant can point it
// elsewhere is named by its field. Its ports, and whether it is headless, decide nothing of where a
// call lands.
func TestAJobManagerServiceRoutesAsRenderedOrSaysWhyNot(t *testing.T) {
	owner := OwnerFromApplication(testApp())
	const hash = "0123abcd"
	cases := map[string]struct {
		edit func(*corev1.Service)
		want string
	}{
		"as rendered": {func(*corev1.Service) {}, ""},
		"as the API server keeps it": {func(s *corev1.Service) {
			s.Spec.Type, s.Spec.ClusterIPs = corev1.ServiceTypeClusterIP, []string{corev1.ClusterIPNone}
			s.UID, s.ResourceVersion = "svc-uid", "7"
		}, ""},
		"other ports": {func(s *corev1.Service) { s.Spec.Ports = s.Spec.Ports[:1] }, ""},
		"ExternalName": {func(s *corev1.Service) {
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "jm.other-team.svc.cluster.local"}
		}, "spec.type is ExternalName, not ClusterIP"},
		"an external name left on a ClusterIP Service": {func(s *corev1.Service) { s.Spec.ExternalName = "jm.other-team.svc.cluster.local" },
			"spec.externalName is set (jm.other-team.svc.cluster.local)"},
		"NodePort":                {func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort }, "spec.type is NodePort, not ClusterIP"},
		"a cluster IP, as Lyft's": {func(s *corev1.Service) { s.Spec.ClusterIP = "10.0.0.7" }, ""},
		"no selector":             {func(s *corev1.Service) { s.Spec.Selector = nil }, "spec.selector is not the JobManager pods'"},
		"another selector":        {func(s *corev1.Service) { s.Spec.Selector["flink-app-hash"] = "ffffffff" }, "spec.selector is not the JobManager pods'"},
		"a wider selector":        {func(s *corev1.Service) { delete(s.Spec.Selector, ComponentLabel) }, "spec.selector is not the JobManager pods'"},
		"not the object's":        {func(s *corev1.Service) { s.OwnerReferences = nil }, "metadata.ownerReferences does not name FlinkApplication wordcount"},
		"another object's":        {func(s *corev1.Service) { s.OwnerReferences[0].UID = "uid-2" }, "metadata.ownerReferences does not name FlinkApplication wordcount"},
		"being deleted":           {func(s *corev1.Service) { now := metav1.Now(); s.DeletionTimestamp = &now }, "is being deleted"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			svc := owner.RenderJobManagerService(hash)
			c.edit(svc)
			got := owner.JobManagerServiceProblem(svc, hash)
			if c.want == "" {
				assert.Empty(t, got)
			} else {
				assert.Contains(t, got, c.want)
			}
		})
	}
	assert.Contains(t, owner.JobManagerServiceProblem(nil, hash), "does not exist")
}

// The Service RenderJobManagerService renders is the one RenderCluster renders.
func TestTheJobManagerServiceIsTheClustersOwn(t *testing.T) {
	owner := OwnerFromApplication(testApp())
	objs, err := owner.RenderCluster("0123abcd", "")
	assert.NoError(t, err)
	assert.Equal(t, objs.Service, owner.RenderJobManagerService("0123abcd"))
}
