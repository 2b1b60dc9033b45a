package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned/fake"
)

func TestConvertReadsADirectoryAndNamesWhatItLeavesOut(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(`apiVersion: flink.apache.org/v1beta1
kind: FlinkSessionJob
metadata: {name: orders}
spec:
  deploymentName: session
  job: {jarURI: "https://example.com/orders.jar", autoscalerResetNonce: 1}
`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.yml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a manifest"), 0o600))
	code, out, errOut := run(t, fake.NewSimpleClientset(), "convert", "-f", dir)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "kind: FlinkSessionJob")
	assert.Contains(t, out, "clusterName: session")
	assert.Contains(t, out, "kind: ConfigMap")
	assert.Contains(t, errOut, "warning: FlinkSessionJob/orders: spec.job.autoscalerResetNonce:")
	assert.Contains(t, errOut, "converted 1 object(s), passed 1 through, 1 warning(s)")
}

func TestConvertWantsAFile(t *testing.T) {
	code, _, errOut := run(t, fake.NewSimpleClientset(), "convert")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "-f FILE|DIR")
}
