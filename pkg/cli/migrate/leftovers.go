package migrate

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

var (
	services  = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	ingresses = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}
)

// leftovers names what the suspended Apache deployment keeps under the names a FlinkApplication
// of the same name uses, and how to free them: the stopped JobManager's Service (Flink's own,
// kept with the JobManager Deployment until the Apache operator's
// kubernetes.operator.jm-deployment.shutdown-ttl passes) and the FlinkDeployment's UI Ingress (kept
// as long as it exists). flinkfsm does not take over objects it did not create. The Service blocks:
// the application's job starts only once its stable Service is made, and a deploy that cannot make
// it fails, so the application is created only once the name is free. The Ingress only warns: the
// UI waits for it, the job does not. What cannot be read (no permission, say) is not reported.
func (m *migration) leftovers(ctx context.Context, a apacheObject, t *target) (blocking, warnings []string) {
	if t.app == nil {
		return nil, nil
	}
	ns, name := a.u.GetNamespace(), a.u.GetName()
	if svc, err := m.Apache.Resource(services).Namespace(ns).Get(ctx, name, metav1.GetOptions{}); err == nil && !ownedBy(svc.GetOwnerReferences(), v1beta1.FlinkApplicationKind) {
		blocking = append(blocking, fmt.Sprintf("Service %s/%s is the stopped Apache JobManager's, kept with its Deployment until the Apache operator's "+
			"kubernetes.operator.jm-deployment.shutdown-ttl passes; %s's stable Service has that name, and its job starts only once it is free: "+
			"kubectl delete deployment %s -n %s removes both (the job in it is stopped, its savepoint recorded)", ns, name, t, name, ns))
	}
	if t.app.Spec.Ingress == nil {
		return blocking, nil
	}
	var out []string
	if ing, err := m.Apache.Resource(ingresses).Namespace(ns).Get(ctx, name, metav1.GetOptions{}); err == nil && !ownedBy(ing.GetOwnerReferences(), v1beta1.FlinkApplicationKind) {
		out = append(out, fmt.Sprintf("Ingress %s/%s is %s's (spec.ingress), kept while it exists; %s's UI Ingress has that name and waits for it: "+
			"remove spec.ingress from the suspended %s, or delete it", ns, name, a.short(), t, a.short()))
	}
	return blocking, out
}

func ownedBy(owners []metav1.OwnerReference, kind string) bool {
	for _, o := range owners {
		if o.Kind == kind && o.Controller != nil && *o.Controller {
			return true
		}
	}
	return false
}
