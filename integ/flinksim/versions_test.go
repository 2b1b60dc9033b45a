package flinksim

import (
	"strings"
	"testing"
)

// Before 1.20 Flink's handlers refuse a request property the release does not have; from 1.20 on
// they ignore it (FLINK-35302), so that a removed property is lost without a word.
func TestRequestPropertiesPerRelease(t *testing.T) {
	tests := []struct {
		version string
		body    map[string]any
		want    int
	}{
		{"1.18", map[string]any{"claimMode": "NO_CLAIM"}, 400},
		{"1.19", map[string]any{"claimMode": "NO_CLAIM"}, 400},
		{"1.19", map[string]any{"restoreMode": "NO_CLAIM"}, 200},
		{"1.19", map[string]any{"unknown": true}, 400},
		{"1.16", map[string]any{"flinkConfiguration": map[string]string{"a": "b"}}, 400},
		{"1.18", map[string]any{"flinkConfiguration": map[string]string{"a": "b"}}, 200},
		{"1.20", map[string]any{"claimMode": "NO_CLAIM"}, 200},
		{"1.20", map[string]any{"unknown": true}, 200},
		{"2.2", map[string]any{"programArgs": "--a b"}, 200},
		{"2.2", map[string]any{"claimMode": "CLAIM", "restoreMode": "NO_CLAIM"}, 200},
	}
	for _, tc := range tests {
		h := newHarness(t, Options{FlinkVersion: tc.version})
		status, m := h.post("/jars/"+jar+"/run", tc.body)
		if status != tc.want {
			t.Errorf("Flink %s, %v: %d %v, want %d", tc.version, tc.body, status, m, tc.want)
		}
		if status == 400 && !strings.Contains(errorText(m), "Request did not match expected format JarRunRequestBody.") {
			t.Errorf("Flink %s, %v: %v", tc.version, tc.body, m)
		}
	}
}

// A JobManager reports the release it simulates, as Flink does in /overview and /config.
func TestReleaseName(t *testing.T) {
	for version, want := range map[string]string{
		"": "1.20.0", "1.18": "1.18.0", "1.18.1": "1.18.1", "2.2": "2.2.0", "v1_14": "1.14.0", "2.0-SNAPSHOT": "2.0.0", "x": "1.20.0",
	} {
		if got := releaseName(version); got != want {
			t.Errorf("releaseName(%q) = %q, want %q", version, got, want)
		}
	}
	h := newHarness(t, Options{FlinkVersion: "2.2"})
	if got := h.mustGet("/overview")["flink-version"]; got != "2.2.0" {
		t.Errorf("/overview says flink-version %v, want 2.2.0", got)
	}
}
