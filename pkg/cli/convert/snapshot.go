package convert

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// maxBackoffLimit is the most retries a FlinkSnapshot takes; the Apache operator's -1 (for ever) is
// written as it.
const maxBackoffLimit = 100

// stateSnapshot converts a FlinkStateSnapshot to a FlinkSnapshot. A savepoint's disposeOnDelete is
// true by default in the Apache operator and false in flinkfsm: it is written as the Apache object
// meant it.
func stateSnapshot(meta metav1.ObjectMeta, spec *fields) ([]any, error) {
	out := &v1beta1.FlinkSnapshot{TypeMeta: typeMeta(v1beta1.FlinkSnapshotKind), ObjectMeta: meta}
	ref := spec.object("jobReference")
	if ref == nil {
		// The Apache operator registers a savepoint that already exists without a job; a FlinkSnapshot
		// is always some owner's.
		spec.out.warn(spec.path, "no jobReference: a FlinkSnapshot belongs to a FlinkApplication or FlinkSessionJob; "+
			"name the savepoint's path in that object's savepointPath (initialSavepointPath) instead: not converted")
		return nil, nil
	}
	kind, _ := ref.text("kind")
	out.Spec.Owner.Name, _ = ref.text("name")
	switch kind {
	case "FlinkDeployment":
		out.Spec.Owner.Kind = v1beta1.FlinkApplicationKind
	case "FlinkSessionJob":
		out.Spec.Owner.Kind = v1beta1.FlinkSessionJobKind
	default:
		ref.out.warn(ref.at("kind"), fmt.Sprintf("%q owns no job flinkfsm follows; left out", kind))
	}
	ref.rest()
	savepoint, checkpoint := spec.object("savepoint"), spec.object("checkpoint")
	switch {
	case savepoint != nil && checkpoint != nil:
		return nil, fmt.Errorf("spec.savepoint and spec.checkpoint are both set")
	case checkpoint != nil:
		out.Spec.Type = v1beta1.SnapshotCheckpoint
		checkpoint.rest()
	default:
		out.Spec.Type = v1beta1.SnapshotSavepoint
		dispose := true
		if savepoint != nil {
			path, _ := savepoint.text("path")
			exists, _ := savepoint.boolean("alreadyExists")
			if exists {
				out.Spec.Path = path
			} else if path != "" {
				savepoint.out.warn(savepoint.at("path"), "the directory of a savepoint to take; flinkfsm takes it in state.savepoints.dir of the job")
			}
			switch format, _ := savepoint.text("formatType"); strings.ToUpper(format) {
			case "NATIVE":
				out.Spec.FormatType = v1beta1.SavepointFormatNative
			case "CANONICAL", "":
			default:
				savepoint.out.warn(savepoint.at("formatType"), fmt.Sprintf("%q is not CANONICAL or NATIVE; left out", format))
			}
			if d, ok := savepoint.boolean("disposeOnDelete"); ok {
				dispose = d
			}
			savepoint.rest()
		}
		out.Spec.DisposeOnDelete = dispose
	}
	if n, ok := spec.integer("backoffLimit"); ok {
		limit := int32(min(max(n, 0), maxBackoffLimit))
		if n < 0 {
			limit = maxBackoffLimit
			spec.out.warn(spec.at("backoffLimit"), fmt.Sprintf("%d (for ever) is written %d, the most flinkfsm tries", n, maxBackoffLimit))
		}
		out.Spec.BackoffLimit = &limit
	}
	return []any{out}, nil
}
