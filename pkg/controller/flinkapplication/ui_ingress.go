package flinkapplication

import (
	"encoding/json"
	"reflect"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// ensureUIIngress makes the application's Flink UI Ingress what its spec (or the operator's
// ingressUrlFormat) asks for: created with the generic Service it routes to, changed when the spec's
// ingress settings change (they are outside the cluster hash, so changing them redeploys nothing),
// deleted when neither asks for one any more. The Ingress routes to the generic Service, which
// follows the live cluster, so it never changes with a deploy.
func ensureUIIngress(rc *Context) error {
	want, err := flink.UIIngress(rc.App, rc.Config.IngressURLFormat)
	if err != nil {
		// A host that is no DNS name: said as the reason, the job is left as it is.
		rc.Machine.Reason = "no Ingress for the Flink UI: " + err.Error()
		return nil
	}
	have := rc.Ingress
	if want == nil && have == nil || want != nil && have != nil && sameIngress(have, want) {
		return nil
	}
	if err := rc.mayAct(); err != nil {
		return err
	}
	api := rc.env.Kube.NetworkingV1().Ingresses(rc.Meta.Namespace)
	switch {
	case want == nil:
		err := api.Delete(rc, have.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &have.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			return kubeError("DeleteIngress", err)
		}
		rc.Ingress = nil
	case have == nil:
		created, err := api.Create(rc, want, metav1.CreateOptions{FieldManager: fieldManager})
		if apierrors.IsAlreadyExists(err) {
			return jobs.Retryable("CreateIngress", err)
		}
		if err != nil {
			return kubeError("CreateIngress", err)
		}
		rc.Ingress = created
		rc.event(false, "IngressCreated", "the Flink UI is at "+flink.UIURL(created))
	default:
		patch, _ := json.Marshal(map[string]interface{}{
			"metadata": map[string]interface{}{"labels": want.Labels, "annotations": want.Annotations,
				"resourceVersion": have.ResourceVersion},
			"spec": want.Spec,
		})
		updated, err := api.Patch(rc, have.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
		if err != nil {
			return kubeError("UpdateIngress", err)
		}
		rc.Ingress = updated
	}
	return nil
}

// sameIngress tells whether the Ingress as it is already is what is wanted: its spec, and the labels
// and annotations the operator sets. Others, which an ingress controller may set, are left alone; so
// is one the operator set and no longer wants, which it cannot tell apart from those. A class the
// spec does not name is whatever the cluster defaulted it to.
func sameIngress(have, want *networkingv1.Ingress) bool {
	return hasAll(have.Labels, want.Labels) && hasAll(have.Annotations, want.Annotations) &&
		reflect.DeepEqual(have.Spec.Rules, want.Spec.Rules) && reflect.DeepEqual(have.Spec.TLS, want.Spec.TLS) &&
		(want.Spec.IngressClassName == nil || reflect.DeepEqual(have.Spec.IngressClassName, want.Spec.IngressClassName))
}

// hasAll tells whether have holds every key of want with its value.
func hasAll(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// showUIURLs writes where users find the Flink UI through its Ingress, as the Lyft operator did:
// clusterStatus.clusterOverviewURL and jobStatus.jobOverviewURL; empty without an Ingress.
func showUIURLs(rc *Context) {
	cs, js := &rc.App.Status.ClusterStatus, &rc.App.Status.JobStatus
	cs.ClusterOverviewURL, js.JobOverviewURL = "", ""
	if base := flink.UIURL(rc.Ingress); base != "" {
		cs.ClusterOverviewURL = base + "/#/overview"
		if js.JobID != "" {
			js.JobOverviewURL = base + "/#/jobs/" + js.JobID
		}
	}
}
