package clusters

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testclock "k8s.io/utils/clock/testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// The writes of a cluster's objects, against a fake API server: what they send, what they return
// as values, and how their failures are marked.

func wordcount() flink.ClusterOwner {
	slots := int32(2)
	return flink.OwnerFromApplication(&v1beta1.FlinkApplication{
		ObjectMeta: metav1.ObjectMeta{Name: "wc", Namespace: "team", UID: "wc-uid"},
		Spec: v1beta1.FlinkApplicationSpec{
			ClusterSpec: v1beta1.ClusterSpec{Image: "flink-wordcount:1", FlinkVersion: "1.20"},
			JarName:     "wordcount.jar", Parallelism: 3,
			TaskManagerConfig: v1beta1.TaskManagerConfig{TaskSlots: &slots},
		},
	})
}

func testWriter(kube *fake.Clientset) (Writer, PodPolicy) {
	w := Writer{Kube: kube, Namespace: "team", FieldManager: "flinkfsm"}
	p := PodPolicy{Kube: kube, Namespaces: &NamespaceCache{}, Clock: testclock.NewFakeClock(time.Now())}
	return w, p
}

func TestACreatedClusterIsFoundAndNotCreatedTwice(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewSimpleClientset()
	w, policy := testWriter(kube)
	owner := wordcount()
	require.NoError(t, Create(ctx, w, policy, owner, "0123abcd", "", nil))
	deploys, err := kube.AppsV1().Deployments("team").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	services, err := kube.CoreV1().Services("team").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	got, _ := Group(owner, ptrs(deploys.Items), ptrs(services.Items), nil, nil)
	c := got["0123abcd"]
	require.NotNil(t, c)
	assert.NotNil(t, c.JobManager)
	assert.NotNil(t, c.TaskManager)
	assert.NotNil(t, c.Service)
	assert.False(t, c.Empty())

	writes := len(kube.Actions())
	require.NoError(t, Create(ctx, w, policy, owner, "0123abcd", "", c))
	assert.Len(t, kube.Actions(), writes, "nothing is sent for a cluster that is there")
}

func TestScaleSaysWhatItDidAndReturnsTheDeploymentAsItIsNow(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewSimpleClientset()
	w, policy := testWriter(kube)
	owner := wordcount()
	require.NoError(t, Create(ctx, w, policy, owner, "0123abcd", "", nil))
	tm, err := kube.AppsV1().Deployments("team").Get(ctx, flink.TaskManagerNameOf("wc", "0123abcd"), metav1.GetOptions{})
	require.NoError(t, err)
	c := &Objects{Hash: "0123abcd", TaskManager: tm}

	scaled, events, err := Scale(ctx, w, c, Replicas(tm)+2)
	require.NoError(t, err)
	assert.Equal(t, Replicas(tm)+2, Replicas(scaled))
	require.Len(t, events, 1)
	assert.Equal(t, "TaskManagersScaled", events[0].Reason)
	assert.Same(t, tm, c.TaskManager, "the objects as read are the caller's to change")

	same, events, err := Scale(ctx, w, c, Replicas(tm))
	require.NoError(t, err)
	assert.Same(t, tm, same)
	assert.Empty(t, events)
}

func TestAFencedWriterSendsNothingAndReturnsTheFencesError(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewSimpleClientset()
	w, policy := testWriter(kube)
	lost := errors.New("lease lost")
	w.Fence = func() error { return lost }
	assert.Same(t, lost, Create(ctx, w, policy, wordcount(), "0123abcd", "", nil))
	assert.Same(t, lost, Delete(ctx, w, "wc", "0123abcd", &Objects{Hash: "0123abcd"}))
	assert.Empty(t, kube.Actions())
}

func TestFailedWritesAreMarkedByWhetherAnotherAttemptMayPass(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewSimpleClientset()
	kube.PrependReactor("create", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewBadRequest("quantities must match the regular expression")
	})
	w, policy := testWriter(kube)
	err := Create(ctx, w, policy, wordcount(), "0123abcd", "", nil)
	var ce *Error
	require.ErrorAs(t, err, &ce)
	assert.True(t, ce.Permanent, "the same object is refused again")
	assert.Contains(t, err.Error(), "CreateJobManager: quantities must match")

	err = Delete(ctx, w, "wc", "0123abcd", nil)
	assert.NoError(t, err, "a cluster not found is gone already")
	kube.PrependReactor("delete", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewInternalError(errors.New("etcdserver: request timed out"))
	})
	err = Delete(ctx, w, "wc", "0123abcd", &Objects{Hash: "0123abcd"})
	require.ErrorAs(t, err, &ce)
	assert.False(t, ce.Permanent)
	assert.Equal(t, "DeleteCluster", ce.Step)
}

func ptrs[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}
