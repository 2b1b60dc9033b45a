package clusters

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// A JobManager Service a tenant points elsewhere is refused, and stays refused for RouteSettle
// after it is put back, while DNS may still answer its name as the tenant had it.
func TestATamperedJobManagerServiceIsRefusedUntilItSettles(t *testing.T) {
	owner, hash := wordcount(), "0123abcd"
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	rendered := owner.RenderJobManagerService(hash)
	routes := &Routes{}
	require.Nil(t, routes.Check(owner, hash, rendered, now), "the Service as rendered routes")

	missing := routes.Check(owner, hash, nil, now)
	require.NotNil(t, missing)
	assert.False(t, missing.Tampered, "a missing Service may only not exist yet")

	elsewhere := rendered.DeepCopy()
	elsewhere.Spec.Type, elsewhere.Spec.ExternalName = "ExternalName", "jobmanager.other-team.svc"
	tampered := routes.Check(owner, hash, elsewhere, now)
	require.NotNil(t, tampered)
	assert.True(t, tampered.Tampered)

	back := routes.Check(owner, hash, rendered, now.Add(RouteSettle/2))
	require.NotNil(t, back, "put back, it is refused until DNS has forgotten the tenant's answer")
	assert.Contains(t, back.Error(), "routing elsewhere")
	assert.Nil(t, routes.Check(owner, hash, rendered, now.Add(RouteSettle)))
}

func TestReplacingAJobManagerServiceCreatesTheRenderedOne(t *testing.T) {
	ctx := context.Background()
	owner, hash := wordcount(), "0123abcd"
	have := owner.RenderJobManagerService(hash)
	have.UID, have.Spec.Type, have.Spec.ExternalName = "tenant-made", "ExternalName", "jobmanager.other-team.svc"
	kube := fake.NewSimpleClientset(have)
	w, _ := testWriter(kube)
	created, err := ReplaceJobManagerService(ctx, w, owner, hash, have)
	require.NoError(t, err)
	assert.Empty(t, owner.JobManagerServiceProblem(created, hash))
	got, err := kube.CoreV1().Services("team").Get(ctx, have.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, got.Spec.ExternalName)
}
