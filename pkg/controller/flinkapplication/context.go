package flinkapplication

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
)

// Context is everything one reconcile of one application knows: the application (a working copy
// whose status handlers change), the objects it owns, and a view of Flink that asks each question at
// most once per reconcile. Handlers decide from it; they never list or watch on their own.
type Context struct {
	// Pass is what every kind's pass knows (kindpass.Pass, lifecycle.Pass): the machine's part, the
	// object's job and clusters as worked on and as read, its job settings and its clusters'
	// objects, and the environment it runs in.
	*kindpass.Pass
	// App is the working copy when the object is a FlinkApplication.
	App *v1beta1.FlinkApplication
	// GenericService is the Service that points at the live cluster, if it exists.
	GenericService *corev1.Service
	// Ingress is the application's Flink UI Ingress, if it exists.
	Ingress *networkingv1.Ingress

	env *Environment
}

// applicationKindName is the kind this package's pass runs.
const applicationKindName = v1beta1.FlinkApplicationKind

// newContext is a pass of an application over the objects read, for the machine's part m.
func newContext(ctx context.Context, m *fsm.Pass, e *Environment) *Context {
	var base *kindpass.Environment
	if e != nil {
		base = &e.Environment
	}
	rc := &Context{env: e}
	rc.Pass = kindpass.NewPass(ctx, m, base, applicationKindName, false, patchApplication)
	rc.Kind = rc
	rc.KeepsJobs = func(hash string) bool { return haBringsJobBack(rc, hash) }
	rc.OwnHashes = func(own map[string]bool) {
		if a := rc.App; a != nil {
			own[a.Status.RollbackHash], own[a.Status.TeardownHash], own[a.Status.InPlaceUpdatedFromHash] = true, true, true
			for _, v := range a.Status.VersionStatuses {
				own[v.VersionHash], own[v.JobStatus.ClusterHash] = true, true
			}
		}
	}
	return rc
}

// bind makes working the pass's object and stored the object as read.
func (rc *Context) bind(working, stored subject) { rc.Pass.Bind(working, stored) }

// patchApplication sends a merge patch to the application, to its status when status is set.
func patchApplication(p *kindpass.Pass, patch []byte, status ...string) (metav1.Object, error) {
	return p.Env.Apps.FlinkV1beta1().FlinkApplications(p.Meta.Namespace).Patch(
		p, p.Meta.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager}, status...)
}
