package checkpointbook

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// maxEntryBytes bounds an entry's value as a page holds it: the JSON of an Entry whose path is at
// most maxPath bytes, each of which JSON may write as a six-byte escape.
const maxEntryBytes = 6*maxPath + 256

// IsPageName tells whether a ConfigMap of that name may be a page of the book (PageName).
func IsPageName(name string) bool {
	for i := 0; i < pages; i++ {
		if name == fmt.Sprintf("flinkfsm-checkpoints-%d", i) {
			return true
		}
	}
	return false
}

// entryField tells whether a field of a page may be an entry's: a kind, a dot and a name (Key.field).
func entryField(field string) bool {
	kind, name, ok := strings.Cut(field, ".")
	if !ok || kind == "" || name == "" || len(validation.IsConfigMapKey(field)) > 0 {
		return false
	}
	for _, c := range kind {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}

// ForCache is what a cache of the book's pages keeps of a ConfigMap that carries the book's label:
// of a page, its name and the fields that may be entries (what Read and Forget read), and of any
// other ConfigMap with the label, which a tenant may write as large as the API server takes (1 MiB
// of data), only its name. No labels, annotations or owners: nothing reads them. A page costs its
// cache at most the API server's limit on a ConfigMap's data; any other such ConfigMap, its name.
func ForCache(cm *corev1.ConfigMap) *corev1.ConfigMap {
	kept := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm.Name, Namespace: cm.Namespace, UID: cm.UID,
		ResourceVersion: cm.ResourceVersion, DeletionTimestamp: cm.DeletionTimestamp}}
	if !IsPageName(cm.Name) {
		return kept
	}
	for field, raw := range cm.Data {
		if len(raw) > maxEntryBytes || !entryField(field) {
			continue
		}
		if kept.Data == nil {
			kept.Data = make(map[string]string, len(cm.Data))
		}
		kept.Data[field] = raw
	}
	return kept
}
