package convert

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// lastApplied is kubectl's record of the object it applied: the Apache object's, which says
// nothing true of the converted one.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// objectMeta carries an object's name, namespace, labels and annotations across. What the API
// server writes (uid, resourceVersion, generation, timestamps, managedFields) is left out without a
// word; the Apache operator's finalizers and owner references are named.
func objectMeta(doc *fields) metav1.ObjectMeta {
	var m metav1.ObjectMeta
	f := doc.object("metadata")
	if f == nil {
		return m
	}
	m.Name, _ = f.text("name")
	m.GenerateName, _ = f.text("generateName")
	m.Namespace, _ = f.text("namespace")
	m.Labels = f.stringMap("labels")
	m.Annotations = f.stringMap("annotations")
	delete(m.Annotations, lastApplied)
	if len(m.Annotations) == 0 {
		m.Annotations = nil
	}
	for _, k := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
		"deletionGracePeriodSeconds", "managedFields", "selfLink"} {
		f.take(k)
	}
	f.drop("finalizers", "the Apache operator's finalizers; flinkfsm adds its own")
	f.drop("ownerReferences", "owner references are not carried across; set them on the converted object if it needs them")
	f.rest()
	return m
}

// stringMap takes a field that maps names to text (labels, annotations, a log configuration).
func (f *fields) stringMap(key string) map[string]string {
	o := f.object(key)
	if o == nil {
		return nil
	}
	out := map[string]string{}
	for k := range o.m {
		if v, ok := o.text(k); ok {
			out[k] = v
		}
	}
	return out
}
