package main

import (
	"archive/tar"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// The krew manifest names every platform's archive where the release publishes it, with its
// checksum and the binary krew links as kubectl-flink.
func TestKrewManifestNamesEveryArchive(t *testing.T) {
	var artifacts []artifact
	for _, p := range platforms {
		artifacts = append(artifacts, artifact{platform: p, File: "kubectl-flink_v1.2.3_" + p.OS + "_" + p.Arch + ".tar.gz", SHA256: p.OS + p.Arch})
	}
	var m struct {
		Kind     string
		Metadata struct{ Name string }
		Spec     struct {
			Version   string
			Platforms []struct {
				Selector         struct{ MatchLabels map[string]string }
				URI, SHA256, Bin string
			}
		}
	}
	require.NoError(t, yaml.Unmarshal(krewManifest("v1.2.3", "https://example.com/dl/", artifacts), &m))
	assert.Equal(t, "Plugin", m.Kind)
	assert.Equal(t, "flink", m.Metadata.Name, "installed as kubectl flink")
	assert.Equal(t, "v1.2.3", m.Spec.Version)
	require.Len(t, m.Spec.Platforms, len(platforms))
	for i, p := range m.Spec.Platforms {
		want := platforms[i]
		assert.Equal(t, map[string]string{"os": want.OS, "arch": want.Arch}, p.Selector.MatchLabels)
		assert.Equal(t, "https://example.com/dl/kubectl-flink_v1.2.3_"+want.OS+"_"+want.Arch+".tar.gz", p.URI)
		assert.Equal(t, want.OS+want.Arch, p.SHA256)
		assert.Equal(t, want.binary(), p.Bin)
	}
	assert.Equal(t, "kubectl-flink.exe", platform{"windows", "amd64"}.binary())
}

// An archive holds the plugin, executable, and its docs.
func TestPackMakesTheBinaryExecutable(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "kubectl-flink")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))
	doc := filepath.Join(dir, "doc.md")
	require.NoError(t, os.WriteFile(doc, []byte("# doc\n"), 0o644))
	archive := filepath.Join(dir, "a.tar.gz")
	require.NoError(t, pack(archive, map[string]string{"kubectl-flink": bin, "kubectl-flink.md": doc}))

	f, err := os.Open(archive)
	require.NoError(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	require.NoError(t, err)
	modes := map[string]int64{}
	tr := tar.NewReader(gz)
	for h, err := tr.Next(); err == nil; h, err = tr.Next() {
		modes[h.Name] = h.Mode
	}
	assert.Equal(t, map[string]int64{"kubectl-flink": 0o755, "kubectl-flink.md": 0o644}, modes)
	sum, err := sha256Of(archive)
	require.NoError(t, err)
	assert.Len(t, sum, 64)
}
