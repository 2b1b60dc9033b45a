// Package helmtest renders the Helm chart of deploy/helm/flinkfsm (with helm built by hack/helm.sh)
// and deploy/ (with the cached kubectl's kustomize), so that its tests can check that both install
// the same operator, and the integration suite can install the operator from the chart.
package helmtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/flinkfsm/flinkfsm/integ/localcluster"
	"github.com/flinkfsm/flinkfsm/internal/repo"
)

// ChartDir is the chart, relative to the repository root.
const ChartDir = "deploy/helm/flinkfsm"

// Object is one rendered manifest.
type Object struct {
	Kind, Namespace, Name string
	// Raw is the document as rendered; Content is it parsed (numbers are float64).
	Raw     []byte
	Content map[string]any
}

// ID names the object in messages: "Deployment flinkfsm-system/flinkfsm".
func (o Object) ID() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// HelmBuilt tells whether hack/helm.sh has its binary already, and where it is or would be.
func HelmBuilt() (bool, string, error) {
	root, err := repo.Root()
	if err != nil {
		return false, "", err
	}
	out, err := exec.Command(filepath.Join(root, "hack/helm.sh"), "--where").Output()
	if err != nil {
		return false, "", fmt.Errorf("hack/helm.sh --where: %w", err)
	}
	path := strings.TrimSpace(string(out))
	info, err := os.Stat(path)
	return err == nil && !info.IsDir(), path, nil
}

// Helm runs hack/helm.sh (which builds helm the first time) from the repository root.
func Helm(ctx context.Context, args ...string) ([]byte, error) {
	root, err := repo.Root()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack/helm.sh"), args...)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("helm %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// Template renders the chart as `helm template <release> --namespace <namespace> --include-crds`
// would, with extra arguments such as "--set", "rbac.scope=namespaced" or "-f", "values.yaml".
func Template(ctx context.Context, release, namespace string, extra ...string) ([]Object, []byte, error) {
	args := append([]string{"template", release, ChartDir, "--namespace", namespace, "--include-crds"}, extra...)
	out, err := Helm(ctx, args...)
	if err != nil {
		return nil, nil, err
	}
	objs, err := Parse(out)
	return objs, out, err
}

// Kustomize renders a kustomization directory (relative to the repository root) with the cached
// kubectl, as `kubectl apply -k` would.
func Kustomize(ctx context.Context, dir string) ([]Object, error) {
	root, err := repo.Root()
	if err != nil {
		return nil, err
	}
	bin, err := localcluster.LocateBinaries()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "kubectl"), "kustomize", filepath.Join(root, dir))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kubectl kustomize %s: %v: %s", dir, err, stderr.String())
	}
	return Parse(out)
}

// ReadManifests parses a YAML file of the repository.
func ReadManifests(rel string) ([]Object, error) {
	root, err := repo.Root()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

var separator = regexp.MustCompile(`(?m)^---[ \t]*(#.*)?$`)

// Parse splits a multi-document YAML stream into objects, skipping empty documents.
func Parse(data []byte) ([]Object, error) {
	var out []Object
	for i, doc := range separator.Split(string(data), -1) {
		var content map[string]any
		if err := yaml.Unmarshal([]byte(doc), &content); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(content) == 0 {
			continue
		}
		o := Object{Raw: []byte(doc), Content: content}
		o.Kind, _ = content["kind"].(string)
		if meta, ok := content["metadata"].(map[string]any); ok {
			o.Name, _ = meta["name"].(string)
			o.Namespace, _ = meta["namespace"].(string)
		}
		if o.Kind == "" || o.Name == "" {
			return nil, fmt.Errorf("document %d has no kind or metadata.name", i)
		}
		out = append(out, o)
	}
	return out, nil
}

// Find returns the object of that kind and name (any namespace when namespace is "*").
func Find(objs []Object, kind, namespace, name string) (Object, bool) {
	for _, o := range objs {
		if o.Kind == kind && o.Name == name && (namespace == "*" || o.Namespace == namespace) {
			return o, true
		}
	}
	return Object{}, false
}

// ConfigFile is the operator config file of a rendered ConfigMap (its "config.yaml" key).
func ConfigFile(cm Object) (string, error) {
	data, _ := cm.Content["data"].(map[string]any)
	file, ok := data["config.yaml"].(string)
	if !ok {
		return "", fmt.Errorf("%s has no data.config.yaml", cm.ID())
	}
	return file, nil
}
