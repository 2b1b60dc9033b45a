package flink

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// An application whose jar is a path in its image (jarURI, as the Apache operator names jars) runs it
// the way it runs a jarName: from the JobManager's upload directory, where Flink's /jars/:jarid/run
// finds jars. The JobManager container copies the jar there each time it starts, in a postStart hook:
// the copy lives in the container's own filesystem, which a restarted container gets afresh, so it is
// there for every JobManager process, and Kubernetes marks the container running (and the operator
// submits) only once the hook is done.

// UploadDirKey is Flink's setting for the directory under which its REST API keeps jars
// (<dir>/flink-web-upload).
const UploadDirKey = "web.upload.dir"

// defaultJarUploadDir is the upload directory of a JobManager that copies its jar, unless the spec
// sets one: Flink's own default is a new random directory each start, which nothing could copy into.
const defaultJarUploadDir = "/tmp/flinkfsm-upload"

// The environment the postStart hook reads: paths reach the shell as variables, never as text of
// its script.
const (
	jarInImageEnv = "FLINKFSM_JAR_IN_IMAGE"
	jarDirEnv     = "FLINKFSM_JAR_DIR"
)

// copyJarScript copies the jar into the directory Flink lists jars in.
const copyJarScript = `mkdir -p "$` + jarDirEnv + `" && cp -f -- "$` + jarInImageEnv + `" "$` + jarDirEnv + `/"`

// JarUploadDir is the upload directory of a JobManager that copies its jar: the spec's web.upload.dir,
// or the operator's.
func JarUploadDir(config v1beta1.FlinkConfig) string {
	if v, ok := config[UploadDirKey]; ok && fmt.Sprint(v) != "" {
		return fmt.Sprint(v)
	}
	return defaultJarUploadDir
}

// copyJarOnStart makes the JobManager's main container copy the owner's jar into its upload directory
// each time it starts. A postStart hook the spec's pod template gave the container is replaced:
// the job cannot run without the copy.
func copyJarOnStart(o *ClusterOwner, spec *corev1.PodSpec) {
	if o.JarInImage == "" || len(spec.Containers) == 0 {
		return
	}
	// The main container comes first, with or without pod templates (pod_template.go).
	c := &spec.Containers[0]
	c.Env = append(c.Env,
		corev1.EnvVar{Name: jarInImageEnv, Value: o.JarInImage},
		corev1.EnvVar{Name: jarDirEnv, Value: JarUploadDir(o.Spec.FlinkConfig) + "/flink-web-upload"})
	if c.Lifecycle == nil {
		c.Lifecycle = &corev1.Lifecycle{}
	}
	c.Lifecycle.PostStart = &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", copyJarScript}}}
}
