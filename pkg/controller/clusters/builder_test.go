package clusters

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// The builder tier: each case names the objects the API server holds, runs one write of a cluster's
// objects over a fake clientset, and lists the writes it expects, as "verb resource name" (reads
// are not listed; the writes of one step run side by side, so their order is not).

// step is one write of the clusters package against the objects the fake API server holds.
type step func(ctx context.Context, w Writer, policy PodPolicy, held map[string]runtime.Object) error

type builderCase struct {
	name string
	// holding are the objects the API server holds before the step.
	holding []runtime.Object
	// fenced makes the replica one that may not write.
	fenced bool
	step   step
	// writes are the writes expected, in any order; err the error expected, "" for none.
	writes []string
	err    string
}

func (c builderCase) run(t *testing.T) {
	kube := fake.NewSimpleClientset(c.holding...)
	w, policy := testWriter(kube)
	if c.fenced {
		w.Fence = func() error { return errors.New("this replica lost its lease") }
	}
	held := map[string]runtime.Object{}
	for _, o := range c.holding {
		held[o.(metav1.Object).GetName()] = o
	}
	err := c.step(context.Background(), w, policy, held)
	if c.err == "" {
		require.NoError(t, err)
	} else {
		require.ErrorContains(t, err, c.err)
	}
	assert.ElementsMatch(t, c.writes, writesOf(kube.Actions()))
}

// writesOf are the writes among the actions, as "verb resource name".
func writesOf(actions []k8stesting.Action) []string {
	var out []string
	for _, a := range actions {
		name := ""
		switch a := a.(type) {
		case k8stesting.CreateAction:
			name = a.GetObject().(metav1.Object).GetName()
		case k8stesting.UpdateAction:
			name = a.GetObject().(metav1.Object).GetName()
		case k8stesting.PatchAction:
			name = a.GetName()
		case k8stesting.DeleteAction:
			name = a.GetName()
		default:
			continue
		}
		out = append(out, fmt.Sprintf("%s %s %s", a.GetVerb(), a.GetResource().Resource, name))
	}
	slices.Sort(out)
	return out
}

const hash = "0123abcd"

// rendered are the objects of wordcount's cluster as the renderer makes them.
func rendered(t *testing.T) (jm, tm *appsv1.Deployment, svc *corev1.Service) {
	objs, err := wordcount().RenderCluster(hash, "")
	require.NoError(t, err)
	return objs.JobManager, objs.TaskManager, objs.Service
}

func TestTheWritesOfACluster(t *testing.T) {
	jm, tm, svc := rendered(t)
	jmName, tmName, svcName := flink.JobManagerNameOf("wc", hash), flink.TaskManagerNameOf("wc", hash), flink.VersionedServiceNameOf("wc", hash)
	create := func(have func(map[string]runtime.Object) *Objects) step {
		return func(ctx context.Context, w Writer, policy PodPolicy, held map[string]runtime.Object) error {
			return Create(ctx, w, policy, wordcount(), hash, "", have(held))
		}
	}
	objectsOf := func(held map[string]runtime.Object) *Objects {
		c := &Objects{Hash: hash}
		if o, ok := held[jmName]; ok {
			c.JobManager = o.(*appsv1.Deployment)
		}
		if o, ok := held[tmName]; ok {
			c.TaskManager = o.(*appsv1.Deployment)
		}
		if o, ok := held[svcName]; ok {
			c.Service = o.(*corev1.Service)
		}
		return c
	}
	cases := []builderCase{
		{name: "a new cluster is created whole", step: create(func(map[string]runtime.Object) *Objects { return nil }),
			writes: []string{"create deployments " + jmName, "create deployments " + tmName, "create services " + svcName}},
		{name: "a cluster whose Service was deleted gets its Service back, and nothing else",
			holding: []runtime.Object{jm, tm}, step: create(objectsOf),
			writes: []string{"create services " + svcName}},
		{name: "a whole cluster is left as it is", holding: []runtime.Object{jm, tm, svc}, step: create(objectsOf)},
		{name: "a fenced replica creates nothing", fenced: true, step: create(func(map[string]runtime.Object) *Objects { return nil }),
			err: "lost its lease"},
		{name: "a cluster is deleted whole", holding: []runtime.Object{jm, tm, svc},
			step: func(ctx context.Context, w Writer, _ PodPolicy, held map[string]runtime.Object) error {
				return Delete(ctx, w, "wc", hash, objectsOf(held))
			},
			writes: []string{"delete deployments " + jmName, "delete deployments " + tmName, "delete services " + svcName}},
		{name: "a cluster not found is gone already",
			step: func(ctx context.Context, w Writer, _ PodPolicy, _ map[string]runtime.Object) error {
				return Delete(ctx, w, "wc", hash, nil)
			}},
		{name: "a fenced replica deletes nothing", holding: []runtime.Object{jm, tm, svc}, fenced: true,
			step: func(ctx context.Context, w Writer, _ PodPolicy, held map[string]runtime.Object) error {
				return Delete(ctx, w, "wc", hash, objectsOf(held))
			},
			err: "lost its lease"},
		{name: "TaskManagers are scaled by a patch of their Deployment", holding: []runtime.Object{tm},
			step: func(ctx context.Context, w Writer, _ PodPolicy, held map[string]runtime.Object) error {
				_, _, err := Scale(ctx, w, objectsOf(held), Replicas(tm)+1)
				return err
			},
			writes: []string{"patch deployments " + tmName}},
		{name: "TaskManagers at the replicas asked for are left alone", holding: []runtime.Object{tm},
			step: func(ctx context.Context, w Writer, _ PodPolicy, held map[string]runtime.Object) error {
				_, _, err := Scale(ctx, w, objectsOf(held), Replicas(tm))
				return err
			}},
		{name: "a JobManager Service pointed elsewhere is replaced by the one the operator renders", holding: []runtime.Object{svc},
			step: func(ctx context.Context, w Writer, _ PodPolicy, held map[string]runtime.Object) error {
				_, err := ReplaceJobManagerService(ctx, w, wordcount(), hash, held[svcName].(*corev1.Service))
				return err
			},
			writes: []string{"delete services " + svcName, "create services " + svcName}},
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}

func TestTheWritesOfTheStableServiceAndHAConfigMaps(t *testing.T) {
	want := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "wc", Namespace: "team"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "wc", "hash": hash}}}
	elsewhere := want.DeepCopy()
	elsewhere.Spec.Selector = map[string]string{"app": "wc", "hash": "ffff0000"}
	point := func(have *corev1.Service) step {
		return func(ctx context.Context, w Writer, _ PodPolicy, _ map[string]runtime.Object) error {
			_, err := PointService(ctx, w, want, have)
			return err
		}
	}
	var ha []string
	var haObjects []runtime.Object
	for i := range haDeletesPerPass + 3 {
		name := fmt.Sprintf("%s-config-map-%02d", flink.HAClusterIDOf("wc", hash), i)
		ha = append(ha, name)
		haObjects = append(haObjects, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"}})
	}
	var firstDeletes []string
	for _, name := range ha[:haDeletesPerPass] {
		firstDeletes = append(firstDeletes, "delete configmaps "+name)
	}
	cases := []builderCase{
		{name: "the stable Service is created", step: point(nil), writes: []string{"create services wc"}},
		{name: "the stable Service is pointed at the cluster by a patch of its selector", holding: []runtime.Object{elsewhere},
			step: point(elsewhere), writes: []string{"patch services wc"}},
		{name: "a stable Service that points at the cluster is left alone", holding: []runtime.Object{want}, step: point(want)},
		{name: "a fenced replica points nothing", fenced: true, step: point(elsewhere), err: "lost its lease"},
		{name: "HA ConfigMaps go a pass's worth at a time", holding: haObjects,
			step: func(ctx context.Context, w Writer, _ PodPolicy, _ map[string]runtime.Object) error {
				left, events, err := DeleteHAConfigMaps(ctx, w, "wc", hash, ha)
				if err == nil && (len(left) != 3 || len(events) != 1) {
					return fmt.Errorf("left %d, said %d", len(left), len(events))
				}
				return err
			},
			writes: firstDeletes},
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}
