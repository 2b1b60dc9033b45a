package clusters

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// EnsureUIIngress makes the owner's Flink UI Ingress want, as flink.UIIngress renders it from the
// spec (or the operator's ingressUrlFormat): created with the generic Service it routes to, changed
// when the spec's ingress settings change (they are outside the cluster hash, so changing them
// redeploys nothing), deleted when neither asks for one any more (want nil). The Ingress routes to
// the generic Service, which follows the live cluster, so it never changes with a deploy. have is
// the Ingress as read, nil when there is none.
//
// An Ingress the policy refuses (refusal, with want nil: a host outside the namespace's domains,
// an annotation the operator does not allow...) is not made, and one made before is deleted; one
// the API server refuses is left as it is. Either is the Ingress's failure, never the job's: it
// comes back as the refusal returned, and err is left for what a retry may fix. It returns the
// Ingress as it is now.
func EnsureUIIngress(ctx context.Context, w Writer, want, have *networkingv1.Ingress, refusal string,
	allowedClasses []string) (*networkingv1.Ingress, string, []Event, error) {
	if want != nil {
		recordSpecAnnotations(want)
	}
	if want == nil && have == nil || want != nil && have != nil && sameIngress(have, want, allowedClasses) {
		return have, refusal, nil, nil
	}
	if err := w.mayAct(); err != nil {
		return have, refusal, nil, err
	}
	api := w.Kube.NetworkingV1().Ingresses(w.Namespace)
	switch {
	case want == nil:
		err := api.Delete(ctx, have.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &have.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			return have, refusal, nil, KubeError("DeleteIngress", err)
		}
		return nil, refusal, nil, nil
	case have == nil:
		created, err := api.Create(ctx, want, metav1.CreateOptions{FieldManager: w.FieldManager})
		switch {
		case apierrors.IsAlreadyExists(err):
			return have, "", nil, retryable("CreateIngress", err)
		case refusedByAPIServer(err):
			return have, "the API server refused it: " + err.Error(), nil, nil
		case err != nil:
			return have, "", nil, KubeError("CreateIngress", err)
		}
		return created, refusal, []Event{{Reason: "IngressCreated", Message: "the Flink UI is at " + flink.UIURL(created)}}, nil
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
		updated, err := api.Patch(ctx, have.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: w.FieldManager})
		switch {
		case refusedByAPIServer(err):
			return have, "the API server refused it: " + err.Error(), nil, nil
		case err != nil:
			return have, "", nil, KubeError("UpdateIngress", err)
		}
		return updated, refusal, nil, nil
	}
}

// refusedByAPIServer: the API server, or an admission webhook of an ingress controller (which
// refuses a host and path another Ingress has), refused the Ingress as asked for. Asking again
// would be refused again until the spec changes.
func refusedByAPIServer(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsForbidden(err) || apierrors.IsRequestEntityTooLargeError(err)
}

// UIIngressPolicy is what the operator's configuration lets a UI Ingress claim.
func UIIngressPolicy(c *config.Config) flink.UIIngressPolicy {
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

// specAnnotationsRecord is the annotation in which the operator records, on the UI Ingress, the
// keys of the annotations it set from the spec: so that it takes off one the spec no longer sets
// (a merge patch leaves a key it does not name), and leaves alone those an ingress controller
// writes. Its size is bounded by the spec's annotations, which the CRD bounds.
const specAnnotationsRecord = "flinkfsm.io/spec-annotations"

// recordSpecAnnotations adds the record of the wanted annotations to the wanted Ingress.
func recordSpecAnnotations(want *networkingv1.Ingress) {
	keys := slices.Sorted(maps.Keys(want.Annotations))
	if want.Annotations == nil {
		want.Annotations = map[string]string{}
	}
	want.Annotations[specAnnotationsRecord] = strings.Join(keys, ",")
}

// staleAnnotations are the annotations on the Ingress the operator set and no longer wants: those
// its record names, or, on an Ingress without the record (an earlier operator's, which passed the
// spec's annotations through unchecked), every one, so that none it passed stays on after an upgrade.
func staleAnnotations(have, want *networkingv1.Ingress) []string {
	record, recorded := have.Annotations[specAnnotationsRecord]
	ours := slices.Collect(maps.Keys(have.Annotations))
	if recorded {
		ours = nil
		if record != "" {
			ours = strings.Split(record, ",")
		}
	}
	var stale []string
	for _, k := range ours {
		_, wanted := want.Annotations[k]
		_, on := have.Annotations[k]
		if on && !wanted {
			stale = append(stale, k)
		}
	}
	slices.Sort(stale)
	return stale
}
