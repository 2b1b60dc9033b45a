package flink

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

func jarURIApp() *v1beta1.FlinkApplication {
	app := testApp()
	app.Spec.JarName = ""
	app.Spec.JarURI = "local:///opt/flink/examples/streaming/StateMachineExample.jar"
	return app
}

func TestAJarInTheImageIsCopiedIntoTheUploadDirectoryEachTimeTheJobManagerStarts(t *testing.T) {
	app := jarURIApp()
	assert.Equal(t, "StateMachineExample.jar", app.Spec.JobJar(), "the job runs the jar by its file name")
	c, err := OwnerFromApplication(app).RenderCluster(ClusterHash(app), "")
	require.NoError(t, err)

	jm := c.JobManager.Spec.Template.Spec.Containers[0]
	require.NotNil(t, jm.Lifecycle)
	require.NotNil(t, jm.Lifecycle.PostStart)
	assert.Equal(t, []string{"/bin/sh", "-c", copyJarScript}, jm.Lifecycle.PostStart.Exec.Command)
	env := map[string]string{}
	for _, e := range jm.Env {
		env[e.Name] = e.Value
	}
	assert.Equal(t, "/opt/flink/examples/streaming/StateMachineExample.jar", env[jarInImageEnv], "the path reaches the shell as a variable")
	assert.Equal(t, defaultJarUploadDir+"/flink-web-upload", env[jarDirEnv])
	assert.Contains(t, env["FLINK_PROPERTIES"], UploadDirKey+": "+defaultJarUploadDir, "Flink lists jars where the hook copies them")

	tm := c.TaskManager.Spec.Template.Spec.Containers[0]
	assert.Nil(t, tm.Lifecycle, "TaskManagers get the job's jar from the JobManager")
}

func TestAJarInTheImageGoesToTheUploadDirectoryTheSpecSets(t *testing.T) {
	app := jarURIApp()
	app.Spec.FlinkConfig = v1beta1.FlinkConfig{UploadDirKey: "/data/upload"}
	app.Spec.JobManagerConfig.PodTemplate = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: MainContainerName, Lifecycle: &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}},
	}}}}
	c, err := OwnerFromApplication(app).RenderCluster(ClusterHash(app), "")
	require.NoError(t, err)
	jm := c.JobManager.Spec.Template.Spec.Containers[0]
	assert.Equal(t, []string{"/bin/sh", "-c", copyJarScript}, jm.Lifecycle.PostStart.Exec.Command, "the copy replaces a template's hook")
	var dir string
	for _, e := range jm.Env {
		if e.Name == jarDirEnv {
			dir = e.Value
		}
	}
	assert.Equal(t, "/data/upload/flink-web-upload", dir)
}

func TestAJarNameRendersNoCopy(t *testing.T) {
	app := testApp()
	c, err := OwnerFromApplication(app).RenderCluster(ClusterHash(app), "")
	require.NoError(t, err)
	jm := c.JobManager.Spec.Template.Spec.Containers[0]
	assert.Nil(t, jm.Lifecycle)
	assert.NotContains(t, jm.Env[len(jm.Env)-1].Name, "FLINKFSM")
}

func TestAJarURIChangesTheClusterHashAndAJarNameKeepsItsOwn(t *testing.T) {
	a, b := jarURIApp(), jarURIApp()
	b.Spec.JarURI = "local:///opt/flink/usrlib/other.jar"
	assert.NotEqual(t, ClusterHash(a), ClusterHash(b))
}
