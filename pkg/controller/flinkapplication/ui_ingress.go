package flinkapplication

import (
	"encoding/json"
	"reflect"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// ensureUIIngress makes the application's Flink UI Ingress what its spec (or the operator's
// ingressUrlFormat) asks for: created with the generic Service it routes to, changed when the spec's
// ingress settings change (they are outside the cluster hash, so changing them redeploys nothing),
// deleted when neither asks for one any more. The Ingress routes to the generic Service, which
// follows the live cluster, so it never changes with a deploy.
//
// An Ingress the policy refuses (flink.UIIngress: a host outside the namespace's domains, an
// annotation the operator does not allow...) is not made, and one made before is deleted; one the
// API server refuses is left as it is. Either is the Ingress's failure, never the job's: it comes back
// as refusal, which the Running phase reports (reportUIIngress), and err is left for what a retry may
// fix.
func ensureUIIngress(rc *Context) (refusal string, err error) {
	want, err := flink.UIIngress(rc.App, uiIngressPolicy(rc.Config))
	if err != nil {
		refusal, want = err.Error(), nil
	}
	if want != nil {
		recordSpecAnnotations(want)
	}
	have := rc.Ingress
	allowedClasses := rc.Config.Ingress.AllowedClasses
	if want == nil && have == nil || want != nil && have != nil && sameIngress(have, want, allowedClasses) {
		return refusal, nil
	}
	if err := rc.mayAct(); err != nil {
		return refusal, err
	}
	api := rc.env.Kube.NetworkingV1().Ingresses(rc.Meta.Namespace)
	switch {
	case want == nil:
		err := api.Delete(rc, have.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &have.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			return refusal, kubeError("DeleteIngress", err)
		}
		rc.Ingress = nil
	case have == nil:
		created, err := api.Create(rc, want, metav1.CreateOptions{FieldManager: fieldManager})
		switch {
		case apierrors.IsAlreadyExists(err):
			return "", jobs.Retryable("CreateIngress", err)
		case refusedByAPIServer(err):
			return "the API server refused it: " + err.Error(), nil
		case err != nil:
			return "", kubeError("CreateIngress", err)
		}
		rc.Ingress = created
		rc.event(false, "IngressCreated", "the Flink UI is at "+flink.UIURL(created))
	default:
		annotations := map[string]interface{}{}
		for k, v := range want.Annotations {
			annotations[k] = v
		}
		for _, k := range staleAnnotations(have, want) {
			annotations[k] = nil
		}
		spec := map[string]interface{}{}
		raw, _ := json.Marshal(want.Spec)
		_ = json.Unmarshal(raw, &spec)
		if !classAsWanted(have, want, allowedClasses) && want.Spec.IngressClassName == nil {
			// A merge patch leaves a field it omits as it is: the class is taken off by name.
			spec["ingressClassName"] = nil
		}
		patch, _ := json.Marshal(map[string]interface{}{
			"metadata": map[string]interface{}{"labels": want.Labels, "annotations": annotations,
				"resourceVersion": have.ResourceVersion},
			"spec": spec,
		})
		updated, err := api.Patch(rc, have.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
		switch {
		case refusedByAPIServer(err):
			return "the API server refused it: " + err.Error(), nil
		case err != nil:
			return "", kubeError("UpdateIngress", err)
		}
		rc.Ingress = updated
	}
	return refusal, nil
}

// refusedByAPIServer: the API server, or an admission webhook of an ingress controller (which
// refuses a host and path another Ingress has), refused the Ingress as asked for. Asking again
// would be refused again until the spec changes.
func refusedByAPIServer(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsForbidden(err) || apierrors.IsRequestEntityTooLargeError(err)
}

// uiIngressPolicy is what the operator's configuration lets a UI Ingress claim.
func uiIngressPolicy(c *config.Config) flink.UIIngressPolicy {
	return flink.UIIngressPolicy{URLFormat: c.IngressURLFormat, HostDomains: c.Ingress.HostDomains, AllowedAnnotations: c.Ingress.AllowedAnnotations,
		AllowedClasses: c.Ingress.AllowedClasses}
}

// sameIngress tells whether the Ingress as it is already is what is wanted: its spec, and the labels
// and annotations the operator sets, without one it set and no longer wants. Others, which an
// ingress controller may set, are left alone.
func sameIngress(have, want *networkingv1.Ingress, allowedClasses []string) bool {
	return hasAll(have.Labels, want.Labels) && hasAll(have.Annotations, want.Annotations) && len(staleAnnotations(have, want)) == 0 &&
		reflect.DeepEqual(have.Spec.Rules, want.Spec.Rules) && reflect.DeepEqual(have.Spec.TLS, want.Spec.TLS) &&
		classAsWanted(have, want, allowedClasses)
}

// classAsWanted tells whether the Ingress's class is the one wanted. A class the spec does not
// name is whatever the cluster defaulted it to (the API server fills in the default class at
// create), unless the operator's ingress.allowedClasses leaves it out: one an earlier spec chose,
// before the platform narrowed the list, is taken off rather than kept by a spec that names none.
func classAsWanted(have, want *networkingv1.Ingress, allowedClasses []string) bool {
	if want.Spec.IngressClassName != nil {
		return reflect.DeepEqual(have.Spec.IngressClassName, want.Spec.IngressClassName)
	}
	return have.Spec.IngressClassName == nil || len(allowedClasses) == 0 || slices.Contains(allowedClasses, *have.Spec.IngressClassName)
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
