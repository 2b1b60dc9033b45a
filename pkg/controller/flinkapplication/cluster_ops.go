package flinkapplication

import (
	"encoding/json"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// Finalizer holds a FlinkApplication until its job is dealt with per deleteMode. The name is the Lyft
// operator's, so applications it created are handled the same way.
const Finalizer = "job.finalizers.flink.k8s.io"

// fieldManager names the operator's writes in managedFields.
const fieldManager = "flinkfsm"

// createCluster creates whatever of the cluster with this hash does not exist yet, rendered from
// owner (the object, or a FlinkApplication as a recorded spec had it). Names derive from the hash,
// so a repeat after a crash finds the objects and creates nothing twice. It is the only maker of a
// cluster's objects, so it is where a spec the checks refuse is kept from creating any
// (clusterRefusal): a deploy checks first and says so, and a repair of what someone deleted is held
// to the same checks.
func createCluster(rc *Context, owner flink.ClusterOwner, hash string) error {
	var version v1beta1.FlinkApplicationVersion
	if rc.App != nil {
		version = versionOf(&rc.App.Status, hash)
	}
	// A checkpoint the operator records must outlive the look after next at the job's checkpoints
	// (checkpointRecordWindow), or a job lost with its JobManager would restart from one Flink
	// deleted meanwhile; a record in the checkpoint book waits for its page's write as well.
	owner.KeepCheckpointsFor = rc.Config.CheckpointRecordInterval.Duration + rc.Config.StatusPollInterval.Duration + bookDelay(rc)
	objs, err := owner.RenderCluster(hash, version)
	if err != nil {
		return jobs.Permanent("RenderCluster", err)
	}
	if err := rc.mayAct(); err != nil {
		return err
	}
	have := rc.Clusters[hash]
	apps := rc.env.Kube.AppsV1().Deployments(rc.Meta.Namespace)
	svc := rc.env.Kube.CoreV1().Services(rc.Meta.Namespace)
	opts := metav1.CreateOptions{FieldManager: fieldManager}
	var creates []func() error
	if have == nil || have.JobManager == nil {
		creates = append(creates, func() error {
			if _, err := apps.Create(rc, objs.JobManager, opts); err != nil && !apierrors.IsAlreadyExists(err) {
				return kubeError("CreateJobManager", err)
			}
			return nil
		})
	}
	if have == nil || have.TaskManager == nil {
		creates = append(creates, func() error {
			if _, err := apps.Create(rc, objs.TaskManager, opts); err != nil && !apierrors.IsAlreadyExists(err) {
				return kubeError("CreateTaskManager", err)
			}
			return nil
		})
	}
	if objs.LogConfig != nil && (have == nil || have.LogConfig == nil) {
		// With the cluster's other objects: a pod that comes first waits for it to exist.
		creates = append(creates, func() error {
			_, err := rc.env.Kube.CoreV1().ConfigMaps(rc.Meta.Namespace).Create(rc, objs.LogConfig, opts)
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return kubeError("CreateLogConfig", err)
			}
			return nil
		})
	}
	if have == nil || have.Service == nil {
		creates = append(creates, func() error {
			if _, err := svc.Create(rc, objs.Service, opts); err != nil && !apierrors.IsAlreadyExists(err) {
				return kubeError("CreateService", err)
			}
			return nil
		})
	}
	if objs.VersionService != nil && (have == nil || have.VersionService == nil) {
		creates = append(creates, func() error {
			// The colour's Service may still point at the version this colour had before, on its way out.
			if _, err := svc.Create(rc, objs.VersionService, opts); apierrors.IsAlreadyExists(err) {
				return jobs.Retryable("CreateVersionService", fmt.Errorf("service %s still belongs to an earlier version", objs.VersionService.Name))
			} else if err != nil {
				return kubeError("CreateVersionService", err)
			}
			return nil
		})
	}
	if len(creates) == 0 {
		return nil
	}
	if err := clusterRefusal(rc, owner); err != nil {
		return err
	}
	return allAtOnce(creates)
}

// allAtOnce runs the independent requests of one step side by side and returns the first error in
// their order. The objects of a cluster do not depend on one another, and on a busy API server each
// request waits its turn: made one after another, a cluster's three creates kept a worker three
// times as long, and at a hundred applications deployed at once the workers, not the server, paced
// how fast clusters were made.
func allAtOnce(requests []func() error) error {
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

// scaleTaskManagers sets the TaskManager replicas of the cluster with this hash, for a parallelism
// changed in place.
func scaleTaskManagers(rc *Context, hash string, want int32) error {
	c := rc.Clusters[hash]
	if c == nil || c.TaskManager == nil || replicas(c.TaskManager) == want {
		return nil
	}
	if err := rc.mayAct(); err != nil {
		return err
	}
	patch, _ := json.Marshal(map[string]interface{}{"spec": map[string]interface{}{"replicas": want}})
	updated, err := rc.env.Kube.AppsV1().Deployments(rc.Meta.Namespace).Patch(rc, c.TaskManager.Name, types.MergePatchType,
		patch, metav1.PatchOptions{FieldManager: fieldManager})
	if err != nil {
		return kubeError("ScaleTaskManagers", err)
	}
	rc.event(false, "TaskManagersScaled", fmt.Sprintf("scaled TaskManagers of %s from %d to %d", c.TaskManager.Name, replicas(c.TaskManager), want))
	c.TaskManager = updated
	return nil
}

// deleteCluster deletes the cluster with this hash. Without HA, deleting the JobManager ends its jobs,
// so callers only do this to clusters whose job is finished with or was never started.
func deleteCluster(rc *Context, hash string) error {
	c := rc.Clusters[hash]
	if c == nil {
		return nil
	}
	if err := rc.mayAct(); err != nil {
		return err
	}
	bg := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &bg}
	apps := rc.env.Kube.AppsV1().Deployments(rc.Meta.Namespace)
	for _, name := range []string{flink.JobManagerNameOf(rc.Meta.Name, hash), flink.TaskManagerNameOf(rc.Meta.Name, hash)} {
		if err := apps.Delete(rc, name, opts); err != nil && !apierrors.IsNotFound(err) {
			return jobs.Retryable("DeleteCluster", err)
		}
	}
	services := []string{flink.VersionedServiceNameOf(rc.Meta.Name, hash)}
	if c.VersionService != nil {
		services = append(services, c.VersionService.Name)
	}
	for _, name := range services {
		err := rc.env.Kube.CoreV1().Services(rc.Meta.Namespace).Delete(rc, name, opts)
		if err != nil && !apierrors.IsNotFound(err) {
			return jobs.Retryable("DeleteCluster", err)
		}
	}
	if c.LogConfig != nil {
		err := rc.env.Kube.CoreV1().ConfigMaps(rc.Meta.Namespace).Delete(rc, c.LogConfig.Name, opts)
		if err != nil && !apierrors.IsNotFound(err) {
			return jobs.Retryable("DeleteCluster", err)
		}
	}
	delete(rc.Clusters, hash)
	return nil
}

// deleteClustersExcept removes every owned cluster but the kept ones and says which went.
func deleteClustersExcept(rc *Context, keep ...string) ([]string, error) {
	var gone []string
	for hash, c := range rc.Clusters {
		if contains(keep, hash) || c.JobManager == nil && c.TaskManager == nil && c.Service == nil && c.VersionService == nil && c.LogConfig == nil {
			continue
		}
		if err := deleteCluster(rc, hash); err != nil {
			return gone, err
		}
		gone = append(gone, hash)
	}
	return gone, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x != "" && x == s {
			return true
		}
	}
	return false
}

// pointGenericService makes the application's stable Service select the JobManager of this cluster,
// and then sees to the Flink UI's Ingress, which routes to that Service. An Ingress refused is no
// failure of the deploy: Running reports it.
func pointGenericService(rc *Context, hash string) error {
	if err := pointService(rc, hash); err != nil {
		return err
	}
	_, err := ensureUIIngress(rc)
	return err
}

func pointService(rc *Context, hash string) error {
	want := flink.RenderGenericService(rc.App, hash)
	svc := rc.env.Kube.CoreV1().Services(rc.Meta.Namespace)
	have := rc.GenericService
	if have != nil && selects(have, want.Spec.Selector) {
		return nil
	}
	if err := rc.mayAct(); err != nil {
		return err
	}
	if have == nil {
		created, err := svc.Create(rc, want, metav1.CreateOptions{FieldManager: fieldManager})
		if apierrors.IsAlreadyExists(err) {
			return jobs.Retryable("CreateGenericService", fmt.Errorf("service %s exists but is not in the cache yet", want.Name))
		}
		if err != nil {
			return kubeError("CreateGenericService", err)
		}
		rc.GenericService = created
		return nil
	}
	patch, _ := json.Marshal(map[string]interface{}{"spec": map[string]interface{}{"selector": want.Spec.Selector}})
	updated, err := svc.Patch(rc, have.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
	if err != nil {
		return kubeError("SwitchGenericService", err)
	}
	rc.GenericService = updated
	return nil
}

func selects(svc *corev1.Service, selector map[string]string) bool {
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

func hasFinalizer(obj metav1.Object) bool {
	for _, f := range obj.GetFinalizers() {
		if f == Finalizer {
			return true
		}
	}
	return false
}

// ensureFinalizer adds the finalizer, so that deleting the application passes through Deleting and
// its deleteMode.
func ensureFinalizer(rc *Context) error {
	send, record := finalizerAdding(rc)
	if send == nil {
		return nil
	}
	err := send()
	record()
	return err
}

// finalizerAdding is ensureFinalizer in two halves, so that its request can go beside a cluster's
// creates: send makes the request from the object as it is now, and record, called once send and
// whatever ran beside it are done, writes the result into the working copy. send is nil when the finalizer is
// there already.
func finalizerAdding(rc *Context) (send func() error, record func()) {
	if hasFinalizer(rc.Meta) {
		return nil, func() {}
	}
	return finalizersWrite(rc, append(append([]string(nil), rc.Meta.Finalizers...), Finalizer))
}

func removeFinalizer(rc *Context) error {
	var keep []string
	for _, f := range rc.Meta.Finalizers {
		if f != Finalizer {
			keep = append(keep, f)
		}
	}
	if len(keep) == len(rc.Meta.Finalizers) {
		return nil
	}
	if err := patchFinalizers(rc, keep); err != nil {
		return err
	}
	forgetInBook(rc)
	return nil
}

func patchFinalizers(rc *Context, finalizers []string) error {
	send, record := finalizersWrite(rc, finalizers)
	err := send()
	record()
	return err
}

// finalizersWrite sets the object's finalizers to these, if its resourceVersion is still the one
// the working copy holds (see finalizerAdding for the halves).
func finalizersWrite(rc *Context, finalizers []string) (send func() error, record func()) {
	if finalizers == nil {
		finalizers = []string{}
	}
	patch, _ := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{
		"finalizers": finalizers, "resourceVersion": rc.Meta.ResourceVersion,
	}})
	var updated metav1.Object
	var gone bool
	send = func() error {
		if err := rc.mayAct(); err != nil {
			return err
		}
		obj, err := rc.kind.patch(rc, patch)
		if apierrors.IsNotFound(err) {
			gone = true
			return nil
		}
		if err != nil {
			return jobs.Retryable("PatchFinalizers", err)
		}
		updated = obj
		return nil
	}
	record = func() {
		switch {
		case gone:
			rc.Meta.Finalizers = finalizers
		case updated != nil:
			rc.Meta.Finalizers = updated.GetFinalizers()
			rc.Meta.ResourceVersion = updated.GetResourceVersion()
		}
	}
	return send, record
}
