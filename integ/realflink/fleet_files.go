package realflink

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podFileSystem maps the paths a pod's container sees to this machine's: its volume mounts (a
// hostPath volume to one directory of the fleet's, shared as on one node; a ConfigMap's files
// written out; any other volume a directory of the pod's), the image's files, and the rest to the
// pod's own root.
type podFileSystem struct {
	root   string
	mounts []mount // longest mount path first
}

type mount struct{ path, host string }

func (f *Fleet) podFileSystem(pod *corev1.Pod, c *corev1.Container, image Image, dir string) (*podFileSystem, error) {
	fs := &podFileSystem{root: filepath.Join(dir, "root")}
	if err := os.MkdirAll(fs.root, 0o755); err != nil {
		return nil, err
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	for _, m := range c.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			return nil, fmt.Errorf("volume mount %s: no volume %s", m.MountPath, m.Name)
		}
		host, err := f.volumeDir(pod, v, dir)
		if err != nil {
			return nil, err
		}
		if m.SubPath != "" {
			host = filepath.Join(host, m.SubPath)
		}
		fs.mounts = append(fs.mounts, mount{path: filepath.Clean(m.MountPath), host: host})
	}
	for path, file := range image.Files {
		fs.mounts = append(fs.mounts, mount{path: filepath.Clean(path), host: file})
	}
	sort.Slice(fs.mounts, func(i, j int) bool { return len(fs.mounts[i].path) > len(fs.mounts[j].path) })
	// The image's files must be found in their directories (Flink lists its jar directory).
	for path := range image.Files {
		link := filepath.Join(fs.root, path)
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			return nil, err
		}
		if _, err := os.Lstat(link); err != nil {
			if err := os.Symlink(image.Files[path], link); err != nil {
				return nil, err
			}
		}
	}
	return fs, nil
}

// volumeDir is the directory standing for a volume.
func (f *Fleet) volumeDir(pod *corev1.Pod, v corev1.Volume, dir string) (string, error) {
	switch {
	case v.HostPath != nil:
		host := filepath.Join(f.opts.Dir, "hostpath", v.HostPath.Path)
		return host, os.MkdirAll(host, 0o755)
	case v.ConfigMap != nil:
		host := filepath.Join(dir, "volumes", v.Name)
		if err := os.MkdirAll(host, 0o755); err != nil {
			return "", err
		}
		cm, err := f.kube.CoreV1().ConfigMaps(pod.Namespace).Get(context.Background(), v.ConfigMap.Name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("volume %s: %w", v.Name, err)
		}
		for name, data := range cm.Data {
			target := name
			for _, item := range v.ConfigMap.Items {
				if item.Key == name {
					target = item.Path
				}
			}
			if len(v.ConfigMap.Items) > 0 && target == name && !hasItem(v.ConfigMap.Items, name) {
				continue
			}
			if err := os.WriteFile(filepath.Join(host, target), []byte(data), 0o644); err != nil {
				return "", err
			}
		}
		return host, nil
	default:
		host := filepath.Join(dir, "volumes", v.Name)
		return host, os.MkdirAll(host, 0o755)
	}
}

func hasItem(items []corev1.KeyToPath, key string) bool {
	for _, i := range items {
		if i.Key == key {
			return true
		}
	}
	return false
}

// resolve is the machine's path for a path of the container's.
func (fs *podFileSystem) resolve(path string) string {
	path = filepath.Clean(path)
	for _, m := range fs.mounts {
		if path == m.path {
			return m.host
		}
		if strings.HasPrefix(path, m.path+"/") {
			return filepath.Join(m.host, strings.TrimPrefix(path, m.path))
		}
	}
	return filepath.Join(fs.root, path)
}

// pathKey names the settings whose value is a local path.
var pathKey = regexp.MustCompile(`(?i)(dir|dirs|directory|storagedir|file|path)$`)

// rewritePaths maps the container's paths in the configuration to the machine's: file:// URIs in
// any value, and absolute paths in settings named as paths.
func (fs *podFileSystem) rewritePaths(conf map[string]string) {
	for k, v := range conf {
		switch {
		case strings.HasPrefix(v, "file://"):
			rest := strings.TrimPrefix(v, "file://")
			if strings.HasPrefix(rest, "/") {
				conf[k] = "file://" + fs.resolve(rest)
			}
		case strings.HasPrefix(v, "/") && pathKey.MatchString(k):
			conf[k] = fs.resolve(v)
		}
	}
}
