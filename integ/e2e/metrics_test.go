package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// The operator's /metrics follows Prometheus's naming rules (promlint: units, _total counters, no
// colons) and holds what the alerts in deploy/monitoring read: each application's phase and job
// health, the workqueue, Flink REST calls per operation, and whether this replica leads.
func TestMetricsFollowPrometheusConventions(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	app := s.createRunning("metrics", checkpointing)

	want := map[string]func(labels map[string]string, value float64) bool{
		"flinkfsm_application_phase": func(l map[string]string, v float64) bool {
			return l["namespace"] == s.ns && l["name"] == app.Name && l["kind"] == "FlinkApplication" &&
				l["phase"] == string(v1beta1.PhaseRunning) && v == 1
		},
		"flinkfsm_job_health": func(l map[string]string, v float64) bool {
			return l["namespace"] == s.ns && l["name"] == app.Name && l["health"] != "" && v == 1
		},
		"flinkfsm_job_checkpoint_interval_seconds": func(l map[string]string, v float64) bool {
			return l["namespace"] == s.ns && l["name"] == app.Name && v == 1
		},
		"flinkfsm_applications": func(l map[string]string, v float64) bool {
			return l["kind"] == "FlinkApplication" && l["phase"] == string(v1beta1.PhaseRunning) && v >= 1
		},
		"flinkfsm_phase_transitions_total": func(l map[string]string, v float64) bool {
			return l["to"] == string(v1beta1.PhaseRunning) && v >= 1
		},
		"flinkfsm_phase_duration_seconds":     func(l map[string]string, _ float64) bool { return l["kind"] == "FlinkApplication" },
		"flinkfsm_reconcile_duration_seconds": func(l map[string]string, _ float64) bool { return l["kind"] == "FlinkApplication" },
		"flinkfsm_flink_requests_total":       func(l map[string]string, v float64) bool { return l["operation"] != "" && v >= 1 },
		"flinkfsm_flink_request_duration_seconds": func(l map[string]string, _ float64) bool {
			return l["operation"] != ""
		},
		"flinkfsm_workqueue_adds_total": func(l map[string]string, v float64) bool { return v >= 1 },
		"flinkfsm_workqueue_depth":      func(map[string]string, float64) bool { return true },
		"flinkfsm_leader":               func(_ map[string]string, v float64) bool { return v == 1 },
		"flinkfsm_ready":                func(_ map[string]string, v float64) bool { return v == 1 },
		"process_resident_memory_bytes": func(map[string]string, float64) bool { return true },
	}
	var families map[string]*dto.MetricFamily
	s.eventually("every series the alerts and dashboard read", func() (bool, string) {
		var err error
		if families, err = scrape(t); err != nil {
			return false, err.Error()
		}
		for name, match := range want {
			if !anySeries(families[name], match) {
				return false, "no matching series " + name
			}
		}
		return true, ""
	})

	var all []*dto.MetricFamily
	for name, f := range families {
		if strings.Contains(name, ":") {
			t.Errorf("metric %s has a colon, which Prometheus reserves for recording rules", name)
		}
		if !strings.HasPrefix(name, "flinkfsm_") && !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") {
			t.Errorf("metric %s has neither the operator's prefix nor a standard one", name)
		}
		all = append(all, f)
	}
	problems, err := promlint.NewWithMetricFamilies(all).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}

// scrape reads the running operator's /metrics.
func scrape(t *testing.T) (map[string]*dto.MetricFamily, error) {
	addr := operatorMetricsAddress(t)
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics answered %s", resp.Status)
	}
	var parser expfmt.TextParser
	return parser.TextToMetricFamilies(resp.Body)
}

func anySeries(f *dto.MetricFamily, match func(map[string]string, float64) bool) bool {
	if f == nil {
		return false
	}
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		var v float64
		switch {
		case m.Gauge != nil:
			v = m.GetGauge().GetValue()
		case m.Counter != nil:
			v = m.GetCounter().GetValue()
		case m.Histogram != nil:
			v = float64(m.GetHistogram().GetSampleCount())
		}
		if match(labels, v) {
			return true
		}
	}
	return false
}
