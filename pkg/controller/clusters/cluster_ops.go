package clusters

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// Create creates whatever of the cluster with this hash does not exist yet, rendered from owner
// (the object, or a FlinkApplication as a recorded spec had it) in the BlueGreen colour version (""
// for none); have is the cluster as the pass read it, nil when it read none. Names derive from the
// hash, so a repeat after a crash finds the objects and creates nothing twice. It is the only maker
// of a cluster's objects, so it is where a spec the checks refuse is kept from creating any
// (PodPolicy.Refusal): a deploy checks first and says so, and a repair of what someone deleted is
// held to the same checks.
func Create(ctx context.Context, w Writer, policy PodPolicy, owner flink.ClusterOwner, hash string,
	version v1beta1.FlinkApplicationVersion, have *Objects) error {
	objs, err := owner.RenderCluster(hash, version)
	if err != nil {
		return permanent("RenderCluster", err)
	}
	if err := w.mayAct(); err != nil {
		return err
	}
	apps := w.Kube.AppsV1().Deployments(w.Namespace)
	svc := w.Kube.CoreV1().Services(w.Namespace)
	opts := metav1.CreateOptions{FieldManager: w.FieldManager}
	var creates []func() error
	if have == nil || have.JobManager == nil {
		creates = append(creates, func() error {
			if _, err := apps.Create(ctx, objs.JobManager, opts); err != nil && !apierrors.IsAlreadyExists(err) {
				return KubeError("CreateJobManager", err)
			}
			return nil
		})
	}
	if have == nil || have.TaskManager == nil {
		creates = append(creates, func() error {
			if _, err := apps.Create(ctx, objs.TaskManager, opts); err != nil && !apierrors.IsAlreadyExists(err) {
				return KubeError("CreateTaskManager", err)
			}
			return nil
		})
	}
	if objs.LogConfig != nil && (have == nil || have.LogConfig == nil) {
		// With the cluster's other objects: a pod that comes first waits for it to exist.
		creates = append(creates, func() error {
			_, err := w.Kube.CoreV1().ConfigMaps(w.Namespace).Create(ctx, objs.LogConfig, opts)
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return KubeError("CreateLogConfig", err)
			}
			return nil
		})
	}
	if have == nil || have.Service == nil {
		creates = append(creates, func() error {
			if _, err := svc.Create(ctx, objs.Service, opts); err != nil && !apierrors.IsAlreadyExists(err) {
				return KubeError("CreateService", err)
			}
			return nil
		})
	}
	if objs.VersionService != nil && (have == nil || have.VersionService == nil) {
		creates = append(creates, func() error {
			// The colour's Service may still point at the version this colour had before, on its way out.
			if _, err := svc.Create(ctx, objs.VersionService, opts); apierrors.IsAlreadyExists(err) {
				return retryable("CreateVersionService", fmt.Errorf("service %s still belongs to an earlier version", objs.VersionService.Name))
			} else if err != nil {
				return KubeError("CreateVersionService", err)
			}
			return nil
		})
	}
	if len(creates) == 0 {
		return nil
	}
	if err := policy.Refusal(ctx, w.Namespace, owner); err != nil {
		return err
	}
	return AllAtOnce(creates)
}

// AllAtOnce runs the independent requests of one step side by side and returns the first error in
// their order. The objects of a cluster do not depend on one another, and on a busy API server each
// request waits its turn: made one after another, a cluster's three creates kept a worker three
// times as long, and at a hundred applications deployed at once the workers, not the server, paced
// how fast clusters were made.
func AllAtOnce(requests []func() error) error {
	errs := make([]error, len(requests))
	var wg sync.WaitGroup
	for i, request := range requests {
		if request == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = request()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Scale sets the TaskManager replicas of the cluster c to want, for a parallelism changed in place,
// and returns its TaskManager Deployment as it is now: as read when there is nothing to change
// (nil for a cluster not found).
func Scale(ctx context.Context, w Writer, c *Objects, want int32) (*appsv1.Deployment, []Event, error) {
	if c == nil {
		return nil, nil, nil
	}
	if c.TaskManager == nil || Replicas(c.TaskManager) == want {
		return c.TaskManager, nil, nil
	}
	if err := w.mayAct(); err != nil {
		return c.TaskManager, nil, err
	}
	patch, _ := json.Marshal(map[string]interface{}{"spec": map[string]interface{}{"replicas": want}})
	updated, err := w.Kube.AppsV1().Deployments(w.Namespace).Patch(ctx, c.TaskManager.Name, types.MergePatchType,
		patch, metav1.PatchOptions{FieldManager: w.FieldManager})
	if err != nil {
		return c.TaskManager, nil, KubeError("ScaleTaskManagers", err)
	}
	scaled := Event{Reason: "TaskManagersScaled",
		Message: fmt.Sprintf("scaled TaskManagers of %s from %d to %d", c.TaskManager.Name, Replicas(c.TaskManager), want)}
	return updated, []Event{scaled}, nil
}

// Delete deletes the cluster c, with this hash, of the owner named owner; a cluster not found (nil)
// is gone already. Without HA, deleting the JobManager ends its jobs, so callers only do this to
// clusters whose job is finished with or was never started. The caller forgets what it kept of
// the cluster.
func Delete(ctx context.Context, w Writer, owner, hash string, c *Objects) error {
	if c == nil {
		return nil
	}
	if err := w.mayAct(); err != nil {
		return err
	}
	bg := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &bg}
	apps := w.Kube.AppsV1().Deployments(w.Namespace)
	for _, name := range []string{flink.JobManagerNameOf(owner, hash), flink.TaskManagerNameOf(owner, hash)} {
		if err := apps.Delete(ctx, name, opts); err != nil && !apierrors.IsNotFound(err) {
			return retryable("DeleteCluster", err)
		}
	}
	services := []string{flink.VersionedServiceNameOf(owner, hash)}
	if c.VersionService != nil {
		services = append(services, c.VersionService.Name)
	}
	for _, name := range services {
		err := w.Kube.CoreV1().Services(w.Namespace).Delete(ctx, name, opts)
		if err != nil && !apierrors.IsNotFound(err) {
			return retryable("DeleteCluster", err)
		}
	}
	if c.LogConfig != nil {
		err := w.Kube.CoreV1().ConfigMaps(w.Namespace).Delete(ctx, c.LogConfig.Name, opts)
		if err != nil && !apierrors.IsNotFound(err) {
			return retryable("DeleteCluster", err)
		}
	}
	return nil
}

// PointService makes the owner's stable Service want (flink.RenderGenericService): created when
// have, the Service as read, is nil, its selector changed when it selects other pods. It returns
// the Service as it is now.
func PointService(ctx context.Context, w Writer, want, have *corev1.Service) (*corev1.Service, error) {
	svc := w.Kube.CoreV1().Services(w.Namespace)
	if have != nil && Selects(have, want.Spec.Selector) {
		return have, nil
	}
	if err := w.mayAct(); err != nil {
		return have, err
	}
	if have == nil {
		created, err := svc.Create(ctx, want, metav1.CreateOptions{FieldManager: w.FieldManager})
		if apierrors.IsAlreadyExists(err) {
			return have, retryable("CreateGenericService", serviceInTheWay(ctx, w, want))
		}
		if err != nil {
			return have, KubeError("CreateGenericService", err)
		}
		return created, nil
	}
	patch, _ := json.Marshal(map[string]interface{}{"spec": map[string]interface{}{"selector": want.Spec.Selector}})
	updated, err := svc.Patch(ctx, have.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: w.FieldManager})
	if err != nil {
		return have, KubeError("SwitchGenericService", err)
	}
	return updated, nil
}

// Selects tells whether the Service selects exactly the pods of this selector.
func Selects(svc *corev1.Service, selector map[string]string) bool {
	if len(svc.Spec.Selector) != len(selector) {
		return false
	}
	for k, v := range selector {
		if svc.Spec.Selector[k] != v {
			return false
		}
	}
	return true
}

// serviceInTheWay says why the owner's stable Service could not be created under its name: one of
// the owner's own not yet in the cache (the next pass finds it), or another's, which the operator
// never takes over. The Apache operator's stopped JobManager keeps a Service of its deployment's
// name after kubectl flink migrate, until its shutdown TTL; it must go before this one can be made.
func serviceInTheWay(ctx context.Context, w Writer, want *corev1.Service) error {
	got, err := w.Kube.CoreV1().Services(w.Namespace).Get(ctx, want.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("service %s exists but is not in the cache yet", want.Name)
	}
	for _, ours := range want.OwnerReferences {
		for _, ref := range got.OwnerReferences {
			if ref.UID == ours.UID {
				return fmt.Errorf("service %s exists but is not in the cache yet", want.Name)
			}
		}
	}
	owner := "no owner"
	if ref := metav1.GetControllerOfNoCopy(got); ref != nil {
		owner = fmt.Sprintf("%s %s", ref.Kind, ref.Name)
	} else if len(got.OwnerReferences) > 0 {
		owner = fmt.Sprintf("%s %s", got.OwnerReferences[0].Kind, got.OwnerReferences[0].Name)
	}
	return fmt.Errorf("service %s, the name of this application's stable Service, is another object's (%s), which the operator never "+
		"takes over: delete it (after kubectl flink migrate: the stopped Apache JobManager's Deployment, which owns it), and if the deploy "+
		"failed meanwhile, change spec.restartNonce to deploy again", want.Name, owner)
}
