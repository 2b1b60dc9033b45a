package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// manifest is a FlinkApplication as a user writes it, with the fields the tests vary.
func manifest(name, parallelism, deleteMode string) string {
	return fmt.Sprintf(`apiVersion: flink.k8s.io/v1beta1
kind: FlinkApplication
metadata:
  name: %s
spec:
  image: %s
  jarName: %s
  parallelism: %s
  deleteMode: %s
  flinkVersion: "1.20"
  taskManagerConfig:
    taskSlots: 2
`, name, testImage, testJar, parallelism, deleteMode)
}

// The API server refuses invalid manifests with a message naming the field, and creates nothing.
func TestInvalidManifestRefusedByKubectl(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	apply := func(t *testing.T, yaml string, extra ...string) (string, error) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "app.yaml")
		if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"apply", "-n", s.ns, "-f", path}, extra...)
		stdout, stderr, err := env.Cluster.Kubectl(s.ctx, args...)
		return stdout + stderr, err
	}

	// The same manifest with valid values passes, so a refusal below is the field's doing.
	if out, err := apply(t, manifest("valid", "3", "Savepoint"), "--dry-run=server"); err != nil {
		t.Fatalf("a valid manifest was refused: %v: %s", err, out)
	}
	for _, tt := range []struct {
		name, parallelism, deleteMode, field string
	}{
		{"zero-parallelism", "0", "Savepoint", "spec.parallelism"},
		{"unknown-delete-mode", "3", "Later", "spec.deleteMode"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := apply(t, manifest(tt.name, tt.parallelism, tt.deleteMode))
			if err == nil {
				t.Fatalf("kubectl apply accepted an invalid %s: %s", tt.field, out)
			}
			if !strings.Contains(out, tt.field) {
				t.Errorf("the refusal does not name %s: %s", tt.field, out)
			}
		})
	}

	apps, err := env.Apps.FlinkV1beta1().FlinkApplications(s.ns).List(s.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deploys, err := env.Kube.AppsV1().Deployments(s.ns).List(s.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(apps.Items)+len(deploys.Items) != 0 {
		t.Errorf("refused manifests left %d FlinkApplications and %d Deployments", len(apps.Items), len(deploys.Items))
	}
}
