package operator

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/clock"
	"sigs.k8s.io/yaml"

	appfake "github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned/fake"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flinkapplication"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
)

// names records the name of every series registered through it.
type names map[string]bool

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (n names) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc, 100)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			n[m[1]] = true
		}
	}
	return nil
}

func (n names) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = n.Register(c)
	}
}

func (n names) Unregister(prometheus.Collector) bool { return true }

// registered is every series name the operator registers, as Run does, with the default prefix.
func registered(t *testing.T) names {
	t.Helper()
	n := names{}
	reg := prometheus.WrapRegistererWithPrefix(config.Default().MetricNamePrefix()+"_", n)
	client.New(client.DefaultConfig(), reg)
	kindpass.NewMetrics(reg)
	ctrl := NewController(&flinkapplication.Environment{Environment: kindpass.Environment{
		Kube: kubefake.NewClientset(), Apps: appfake.NewSimpleClientset(), Config: config.Default(), Clock: clock.RealClock{}}})
	reg.MustRegister(ctrl.Collector())
	replicaMetrics(reg, &state{ctrl: ctrl})
	reg.MustRegister(newWorkqueueMetrics().collectors()...)
	for _, std := range []string{"process_resident_memory_bytes", "go_memstats_heap_inuse_bytes"} {
		n[std] = true
	}
	return n
}

var metricRef = regexp.MustCompile(`\b(?:flinkfsm|process|go)_[a-z0-9_]+\b`)

// The alerts and the dashboard shipped in deploy/monitoring read only series the operator
// exports: a renamed metric would otherwise silence an alert without anyone noticing.
func TestAlertsAndDashboardReadExportedSeries(t *testing.T) {
	exported := registered(t)
	rules, err := os.ReadFile("../../deploy/monitoring/prometheusrule.yaml")
	require.NoError(t, err)
	dashboard, err := os.ReadFile("../../deploy/monitoring/grafana-dashboard.json")
	require.NoError(t, err)

	var rule struct {
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert, Expr, For string
					Labels           map[string]string
				}
			}
		}
	}
	require.NoError(t, yaml.Unmarshal(rules, &rule))
	var exprs []string
	alerts := 0
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			assert.NotEmpty(t, r.Alert)
			assert.NotEmpty(t, r.Labels["severity"], "alert %s has no severity", r.Alert)
			exprs = append(exprs, r.Expr)
			alerts++
		}
	}
	assert.GreaterOrEqual(t, alerts, 8)

	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	require.NoError(t, json.Unmarshal(dashboard, &dash))
	for _, p := range dash.Panels {
		for _, target := range p.Targets {
			exprs = append(exprs, target.Expr)
		}
	}
	var unknown []string
	for _, e := range exprs {
		for _, ref := range metricRef.FindAllString(e, -1) {
			base := ref
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				if b := strings.TrimSuffix(ref, suffix); b != ref && exported[b] {
					base = b
				}
			}
			if !exported[base] {
				unknown = append(unknown, ref)
			}
		}
	}
	sort.Strings(unknown)
	assert.Empty(t, unknown, "series read by deploy/monitoring but not exported")
	for _, must := range []string{"flinkfsm_application_phase", "flinkfsm_job_health", "flinkfsm_workqueue_depth",
		"flinkfsm_flink_request_duration_seconds", "flinkfsm_leader", "flinkfsm_status_write_conflicts_total"} {
		assert.True(t, exported[must], "%s exported", must)
	}
}

// metricsPrefix keeps Lyft's operator config working: its colon-separated prefix becomes a valid
// Prometheus name.
func TestMetricsPrefixBecomesAPrometheusName(t *testing.T) {
	cfg := config.Default()
	cfg.MetricsPrefix = "flinkk8soperator:"
	assert.Equal(t, "flinkk8soperator", cfg.MetricNamePrefix())
	require.NoError(t, cfg.Validate())
	cfg.MetricsPrefix = "9lives"
	assert.ErrorContains(t, cfg.Validate(), "operator.metricsPrefix")
}

func TestRequestsAreLabelledByResourceNotByObject(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/namespaces/jobs/pods/wc-tm-1/status":                                    "pods/status",
		"/api/v1/namespaces/jobs/events":                                                 "events",
		"/api/v1/namespaces/jobs":                                                        "namespaces",
		"/api/v1/namespaces":                                                             "namespaces",
		"/apis/apps/v1/namespaces/jobs/deployments/wc-0123abcd-jm":                       "deployments",
		"/apis/flink.k8s.io/v1beta1/namespaces/jobs/flinkapplications/wc/status":         "flinkapplications/status",
		"/apis/flink.k8s.io/v1beta1/flinkapplications":                                   "flinkapplications",
		"/apis/coordination.k8s.io/v1/namespaces/flinkfsm/leases/flinkfsm-operator-lock": "leases",
		"/healthz": "other",
	} {
		assert.Equal(t, want, resourceOf(path), path)
	}
}
