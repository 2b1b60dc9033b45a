package flinksim

import (
	"strings"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// releasesWith are the supported releases that have what since names (2.3 for applications).
func releasesWith(major, minor int) []string {
	var out []string
	for _, v := range v1beta1.SupportedFlinkVersions {
		if flinkAtLeast(v, major, minor) {
			out = append(out, v)
		}
	}
	return out
}

// TestApplicationResponsesMatchOpenAPI drives the application endpoints of each release that has
// them through applications that run, were cancelled, failed and are re-run, and validates each
// answer against the release's document.
func TestApplicationResponsesMatchOpenAPI(t *testing.T) {
	releases := releasesWith(2, 3)
	if len(releases) == 0 {
		t.Skip("no supported release has applications")
	}
	for _, version := range releases {
		t.Run(version, func(t *testing.T) {
			spec := loadRelease(t, version)
			h := newHarness(t, Options{FlinkVersion: version, FlinkConfig: checkpointConfig()})
			running := h.runToRunning(nil)
			failed := h.runRefused(map[string]any{"savepointPath": "s3://missing/savepoint-1"})
			cancelled := h.runToRunning(nil)
			h.call("PATCH", "/jobs/"+cancelled, nil)
			_, m := h.post("/jars/"+jar+"/run-application", map[string]any{"entryClass": "org.example.Job"})
			packaged := m["applicationid"].(string)
			doomed := h.runToRunning(nil)
			h.step(time.Second)
			checkAgainstSpec(t, spec, h, []specRequest{
				{"GET", "/applications/overview", "/applications/overview", nil, 200},
				{"GET", "/applications/" + running, "/applications/{applicationid}", nil, 200},
				{"GET", "/applications/" + failed, "/applications/{applicationid}", nil, 200},
				{"GET", "/applications/" + cancelled, "/applications/{applicationid}", nil, 200},
				{"GET", "/applications/" + packaged, "/applications/{applicationid}", nil, 200},
				{"GET", "/applications/" + failed + "/exceptions", "/applications/{applicationid}/exceptions", nil, 200},
				{"GET", "/applications/" + running + "/exceptions", "/applications/{applicationid}/exceptions", nil, 200},
				{"GET", "/applications/" + running + "/jobmanager/config", "/applications/{applicationid}/jobmanager/config", nil, 200},
				{"POST", "/applications/" + doomed + "/cancel", "/applications/{applicationid}/cancel", nil, 202},
				{"POST", "/jars/" + jar + "/run-application", "/jars/{jarid}/run-application",
					map[string]any{"jobId": strings.Repeat("5e", 16), "claimMode": "NO_CLAIM", "programArgsList": []string{"--a"}}, 202},
				{"GET", "/jobs/" + running + "/execution-result", "/jobs/{jobid}/execution-result", nil, 200},
				{"GET", "/jobs/" + failed + "/execution-result", "/jobs/{jobid}/execution-result", nil, 200},
			})
		})
	}
}

// TestRescaleResponsesMatchOpenAPI drives the rescale endpoints of each release that has them
// through an in-place rescale of the adaptive scheduler with its history kept.
func TestRescaleResponsesMatchOpenAPI(t *testing.T) {
	releases := releasesWith(2, 3)
	if len(releases) == 0 {
		t.Skip("no supported release has the rescale history")
	}
	for _, version := range releases {
		t.Run(version, func(t *testing.T) {
			spec := loadRelease(t, version)
			config := adaptiveFlinkConfig()
			config["web.adaptive-scheduler.rescale-history.size"] = "5"
			h := newHarness(t, Options{FlinkConfig: config, FlinkVersion: version})
			a := h.runToRunning(map[string]any{"parallelism": 2})
			h.call("PUT", "/jobs/"+a+"/resource-requirements", h.requirements(a, 1, 3))
			h.step(31 * time.Second)
			h.jm.SetTaskManagers(3)
			h.step(time.Minute)
			_, history := h.call("GET", "/jobs/"+a+"/rescales/history", nil)
			uuid, _ := at(history, 0, "rescaleUuid").(string)
			if uuid == "" {
				t.Fatalf("no rescale recorded: %v", history)
			}
			checkAgainstSpec(t, spec, h, []specRequest{
				{"GET", "/jobs/" + a + "/rescales/config", "/jobs/{jobid}/rescales/config", nil, 200},
				{"GET", "/jobs/" + a + "/rescales/overview", "/jobs/{jobid}/rescales/overview", nil, 200},
				{"GET", "/jobs/" + a + "/rescales/history", "/jobs/{jobid}/rescales/history", nil, 200},
				{"GET", "/jobs/" + a + "/rescales/summary", "/jobs/{jobid}/rescales/summary", nil, 200},
				{"GET", "/jobs/" + a + "/rescales/details/" + uuid, "/jobs/{jobid}/rescales/details/{rescaleuuid}", nil, 200},
			})
		})
	}
}
