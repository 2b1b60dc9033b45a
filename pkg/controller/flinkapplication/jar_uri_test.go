package flinkapplication

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// An application that names its jar by its path in the image (the Apache operator's jarURI) runs it
// by its file name, and updates across a change of path like any other spec change.
func TestAnApplicationRunsTheJarItsJarURINames(t *testing.T) {
	w := newWorld(t)
	w.imageJars["flink-wordcount:1"] = []string{"StateMachineExample.jar"}
	app := wordcount("sm")
	app.Spec.JarName = ""
	app.Spec.JarURI = "local:///opt/flink/examples/streaming/StateMachineExample.jar"
	w.create(app)
	running := w.runUntilPhase("sm", v1beta1.PhaseRunning)
	require.NotEmpty(t, running.Status.JobStatus.JobID)
	assert.Equal(t, "StateMachineExample.jar", running.Status.JobStatus.JarName)

	w.imageJars["flink-wordcount:1"] = []string{"StateMachineExample.jar", "Other.jar"}
	w.update("sm", func(a *v1beta1.FlinkApplication) { a.Spec.JarURI = "local:///opt/flink/usrlib/Other.jar" })
	updated := w.runUntil("sm", "updated", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != running.Status.JobStatus.JobID &&
			a.Status.JobStatus.State == v1beta1.JobRunning
	})
	assert.Equal(t, "Other.jar", updated.Status.JobStatus.JarName)
	assert.NotEqual(t, running.Status.DeployHash, updated.Status.DeployHash, "a new path is a new cluster")
}
