package migrate

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// target is the flinkfsm object a migration creates: a FlinkApplication or a FlinkSessionJob.
type target struct {
	app *v1beta1.FlinkApplication
	job *v1beta1.FlinkSessionJob
	// warnings are what the converter could not carry across.
	warnings []string
}

func (t *target) meta() *metav1.ObjectMeta {
	if t.app != nil {
		return &t.app.ObjectMeta
	}
	return &t.job.ObjectMeta
}

func (t *target) kind() string {
	if t.app != nil {
		return v1beta1.FlinkApplicationKind
	}
	return v1beta1.FlinkSessionJobKind
}

func (t *target) String() string { return t.kind() + "/" + t.meta().Name }

// startFrom sets the state the new job starts from, and that it runs: a FlinkApplication's
// spec.savepointPath, a FlinkSessionJob's spec.job.initialSavepointPath. A stateless migration
// clears what the converter carried over: the Apache object's initialSavepointPath is the state its
// job started from long ago, and starting from it would rewind the job.
func (t *target) startFrom(savepoint string) {
	if t.app != nil {
		t.app.Spec.SavepointPath, t.app.Spec.RestoreSnapshot, t.app.Spec.SavepointInfo = savepoint, "", v1beta1.SavepointInfo{}
		t.app.Spec.State = v1beta1.JobStateRunning
		return
	}
	t.job.Spec.Job.InitialSavepointPath, t.job.Spec.Job.RestoreSnapshot = savepoint, ""
	t.job.Spec.Job.State = v1beta1.JobStateRunning
}

// startsFrom is the savepoint the object starts from.
func (t *target) startsFrom() string {
	if t.app != nil {
		return t.app.Spec.SavepointPath
	}
	return t.job.Spec.Job.InitialSavepointPath
}

// manifestOf is the Apache object as its user wrote it, for the converter: without its status,
// the migration's record, the Apache operator's finalizers, and with spec.job as it was before the
// migration suspended it, so that the converted object keeps the job's own upgrade mode.
func manifestOf(a apacheObject, original jobSettings) ([]byte, error) {
	u := a.u.DeepCopy()
	unstructured.RemoveNestedField(u.Object, "status")
	annotations := u.GetAnnotations()
	delete(annotations, RecordAnnotation)
	u.SetAnnotations(annotations)
	u.SetFinalizers(nil)
	u.SetManagedFields(nil)
	for field, value := range map[string]string{"state": original.State, "upgradeMode": original.UpgradeMode} {
		if value == "" {
			unstructured.RemoveNestedField(u.Object, "spec", "job", field)
			continue
		}
		if err := unstructured.SetNestedField(u.Object, value, "spec", "job", field); err != nil {
			return nil, err
		}
	}
	return yaml.Marshal(u.Object)
}

// convert converts the Apache object to the flinkfsm object it becomes, starting from the
// savepoint, and marked as the migration's.
func (m *Migrator) convert(a apacheObject, original jobSettings, savepoint string) (*target, error) {
	in, err := manifestOf(a, original)
	if err != nil {
		return nil, err
	}
	out, warnings, err := m.Convert(in)
	if err != nil {
		return nil, fmt.Errorf("converting %s: %w", a, err)
	}
	t, err := decodeTarget(out, a.kind.Target)
	if err != nil {
		return nil, fmt.Errorf("converting %s: %w", a, err)
	}
	t.warnings = warnings
	meta := t.meta()
	if meta.Name != a.u.GetName() {
		return nil, fmt.Errorf("converting %s: the converter named it %q, not %q", a, meta.Name, a.u.GetName())
	}
	meta.Namespace = a.u.GetNamespace()
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[FromUIDAnnotation] = string(a.u.GetUID())
	meta.Annotations[FromAnnotation] = a.String()
	t.startFrom(savepoint)
	return t, nil
}

// decodeTarget reads the converter's output: exactly one object, of the kind expected. Anything
// else it wrote (an object the job would also need) is refused before the job is stopped rather
// than left for the user to find missing after.
func decodeTarget(out []byte, kind string) (*target, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(out)))
	var t *target
	var others []string
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var head metav1.TypeMeta
		var meta struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return nil, err
		}
		_ = yaml.Unmarshal(doc, &meta)
		if head.APIVersion != v1beta1.SchemeGroupVersion.String() || head.Kind != kind || t != nil {
			others = append(others, head.Kind+"/"+meta.Metadata.Name)
			continue
		}
		t = &target{}
		switch kind {
		case v1beta1.FlinkApplicationKind:
			t.app = &v1beta1.FlinkApplication{}
			err = yaml.Unmarshal(doc, t.app)
		case v1beta1.FlinkSessionJobKind:
			t.job = &v1beta1.FlinkSessionJob{}
			err = yaml.Unmarshal(doc, t.job)
		}
		if err != nil {
			return nil, fmt.Errorf("the converter's %s: %w", kind, err)
		}
	}
	switch {
	case t == nil:
		return nil, fmt.Errorf("the converter wrote no %s", kind)
	case len(others) > 0:
		return nil, fmt.Errorf("the converter wrote %s besides the %s; migrate creates only that one: "+
			"apply the others first (kubectl flink convert shows them), or migrate by hand", strings.Join(others, ", "), kind)
	}
	return t, nil
}

// existing reads the target's namesake: nil when there is none.
func (m *Migrator) existing(ctx context.Context, t *target) (*target, error) {
	meta := t.meta()
	var found target
	var err error
	if t.app != nil {
		found.app, err = m.Flinkfsm.FlinkV1beta1().FlinkApplications(meta.Namespace).Get(ctx, meta.Name, metav1.GetOptions{})
	} else {
		found.job, err = m.Flinkfsm.FlinkV1beta1().FlinkSessionJobs(meta.Namespace).Get(ctx, meta.Name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", t, err)
	}
	return &found, nil
}

// create creates the target.
func (m *Migrator) create(ctx context.Context, t *target) error {
	meta := t.meta()
	var err error
	if t.app != nil {
		_, err = m.Flinkfsm.FlinkV1beta1().FlinkApplications(meta.Namespace).Create(ctx, t.app, metav1.CreateOptions{FieldManager: fieldManager})
	} else {
		_, err = m.Flinkfsm.FlinkV1beta1().FlinkSessionJobs(meta.Namespace).Create(ctx, t.job, metav1.CreateOptions{FieldManager: fieldManager})
	}
	if err != nil {
		return fmt.Errorf("creating %s: %w", t, err)
	}
	return nil
}

// checkSessionCluster refuses a FlinkSessionJob whose FlinkSessionCluster flinkfsm does not run:
// the job would wait for it while the Apache job is stopped.
func (m *Migrator) checkSessionCluster(ctx context.Context, t *target) error {
	if t.job == nil {
		return nil
	}
	name := t.job.Spec.ClusterName
	_, err := m.Flinkfsm.FlinkV1beta1().FlinkSessionClusters(t.job.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return refuse("%s runs on FlinkSessionCluster %s, which flinkfsm does not have: create it first "+
			"(kubectl flink convert -f its FlinkDeployment | kubectl apply -f -) and wait until it is Running", t, name)
	}
	if err != nil {
		return refuse("reading FlinkSessionCluster %s: %v", name, err)
	}
	return nil
}
