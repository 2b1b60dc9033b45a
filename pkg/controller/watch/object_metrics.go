package watch

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// objectCollector reports at each scrape what the informer caches hold of every object the
// operator runs: its phase, since when and until when, and its job's health, restarts and last
// recorded checkpoint. Read from the caches, the series appear and go with the objects, and a
// standby replica, whose caches are empty, reports none.
type objectCollector struct {
	m   ObjectMetrics
	obs *Listers

	count, phase, phaseStarted, deadline  *prometheus.Desc
	health, restarts, checkpoint, cpEvery *prometheus.Desc
	parallelism, recommended              *prometheus.Desc
}

var objectLabels = []string{"kind", "namespace", "name"}

// ObjectMetrics is what the per-object series read besides the caches, from the machine and the
// checkpoint book.
type ObjectMetrics struct {
	// Deadline is when the object's current phase gives up, for a phase with a deadline.
	Deadline func(kind, namespace, name string) (time.Time, bool)
	// BookCheckpoint is the newest checkpoint the checkpoint book holds of the object: its job and
	// when it was triggered. Nil when the book is off.
	BookCheckpoint func(kind, namespace, name string) (jobID string, at time.Time, ok bool)
	// VertexName is the name an autoscaled vertex is shown by.
	VertexName func(v1beta1.VertexScaling) string
	// MaxVertices bounds the vertices shown per object.
	MaxVertices int
}

// Collector is the Prometheus collector of the per-object series, to register beside the
// controller's metrics.
func (w *Watch) Collector(m ObjectMetrics) prometheus.Collector {
	return &objectCollector{
		m: m, obs: w.listers,
		count: prometheus.NewDesc("applications", "Objects the operator runs, by kind and phase.",
			[]string{"kind", "phase"}, nil),
		phase: prometheus.NewDesc("application_phase", "1 for the phase each object is in.",
			append(objectLabels, "phase"), nil),
		phaseStarted: prometheus.NewDesc("application_phase_started_timestamp_seconds",
			"When each object entered its current phase.", objectLabels, nil),
		deadline: prometheus.NewDesc("application_phase_deadline_timestamp_seconds",
			"When each object's current phase gives up, for phases with a deadline. Time spent waiting for the "+
				"operator (down, or its queue backed up), and each step Kubernetes takes in starting a cluster, "+
				"extends the real deadline.", objectLabels, nil),
		health: prometheus.NewDesc("job_health", "1 for the health (Green, Yellow, Red) of each object's running job.",
			append(objectLabels, "health"), nil),
		restarts: prometheus.NewDesc("job_restarts_total",
			"Restarts Flink reports for each object's current job; like a process restart, a new job starts it again at 0.", objectLabels, nil),
		checkpoint: prometheus.NewDesc("job_last_checkpoint_timestamp_seconds",
			"When the last completed checkpoint recorded in status was triggered. It is recorded at most every "+
				"checkpointRecordInterval, so it may lag Flink by that much.", objectLabels, nil),
		cpEvery: prometheus.NewDesc("job_checkpoint_interval_seconds",
			"The checkpoint interval each object's job is configured with.", objectLabels, nil),
		parallelism: prometheus.NewDesc("autoscaler_vertex_parallelism",
			"Each vertex's parallelism as the autoscaler last saw it, for objects with spec.autoscaler on; by vertex "+
				"name and id (names repeat).", append(objectLabels, "vertex", "vertex_id"), nil),
		recommended: prometheus.NewDesc("autoscaler_vertex_recommended_parallelism",
			"The parallelism the autoscaler last recommended for each vertex, by vertex name and id.",
			append(objectLabels, "vertex", "vertex_id"), nil),
	}
}

func (o *objectCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{o.count, o.phase, o.phaseStarted, o.deadline, o.health, o.restarts, o.checkpoint, o.cpEvery,
		o.parallelism, o.recommended} {
		ch <- d
	}
}

// objectSeries is what one object contributes.
type objectSeries struct {
	kind, namespace, name, phase string
	phaseStarted                 *metav1.Time
	job                          *v1beta1.FlinkJobStatus
	conf                         v1beta1.FlinkConfig
	autoscaler                   *v1beta1.AutoscalerStatus
}

func (o *objectCollector) Collect(ch chan<- prometheus.Metric) {
	if o.obs == nil {
		return
	}
	counts := map[[2]string]int{}
	for _, l := range o.obs.byNamespace {
		var objects []objectSeries
		apps, _ := l.apps.List(labels.Everything())
		for _, a := range apps {
			objects = append(objects, objectSeries{v1beta1.FlinkApplicationKind, a.Namespace, a.Name,
				string(a.Status.Phase.Normalized()), a.Status.PhaseStartedAt, &a.Status.JobStatus, a.Spec.FlinkConfig, a.Status.Autoscaler})
		}
		jobs, _ := l.sessionJobs.List(labels.Everything())
		for _, j := range jobs {
			objects = append(objects, objectSeries{v1beta1.FlinkSessionJobKind, j.Namespace, j.Name,
				string(j.Status.Phase), j.Status.PhaseStartedAt, &j.Status.JobStatus, sessionJobConfig(l, j), nil})
		}
		clusters, _ := l.sessionClusters.List(labels.Everything())
		for _, c := range clusters {
			objects = append(objects, objectSeries{v1beta1.FlinkSessionClusterKind, c.Namespace, c.Name,
				string(c.Status.Phase), c.Status.PhaseStartedAt, nil, nil, nil})
		}
		for _, s := range objects {
			counts[[2]string{s.kind, s.phase}]++
			o.collectObject(ch, s)
		}
	}
	for k, n := range counts {
		send(ch, o.count, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
}

func (o *objectCollector) collectObject(ch chan<- prometheus.Metric, s objectSeries) {
	gauge := func(d *prometheus.Desc, v float64, extra ...string) {
		send(ch, d, prometheus.GaugeValue, v, append([]string{s.kind, s.namespace, s.name}, extra...)...)
	}
	if s.phase != "" {
		gauge(o.phase, 1, s.phase)
	}
	if s.phaseStarted != nil {
		gauge(o.phaseStarted, unixSeconds(s.phaseStarted.Time))
	}
	if o.m.Deadline != nil {
		if d, ok := o.m.Deadline(s.kind, s.namespace, s.name); ok {
			gauge(o.deadline, unixSeconds(d))
		}
	}
	if as := s.autoscaler; as != nil {
		for _, v := range scrapedVertices(as.Vertices, o.m.MaxVertices) {
			name := o.m.VertexName(v)
			gauge(o.parallelism, float64(v.Current), name, v.ID)
			gauge(o.recommended, float64(v.Recommended), name, v.ID)
		}
	}
	js := s.job
	if js == nil || js.JobID == "" {
		return
	}
	if js.Health != "" {
		gauge(o.health, 1, string(js.Health))
	}
	send(ch, o.restarts, prometheus.CounterValue, float64(js.JobRestartCount), s.kind, s.namespace, s.name)
	if at := o.recordedCheckpointTime(s); !at.IsZero() {
		gauge(o.checkpoint, unixSeconds(at))
	}
	if conf, err := s.conf.Strings(); err == nil {
		if every, err := flink.ParseDuration(conf[flink.CheckpointIntervalKey]); err == nil && every > 0 {
			gauge(o.cpEvery, every.Seconds())
		}
	}
}

// scrapedVertices are the vertices the autoscaler shows, each once by its id, at most
// most: their names come from the JobManager and repeat (many a job has two vertices
// named "Map"), and two series of one label set would fail the whole scrape, for every object.
func scrapedVertices(vertices []v1beta1.VertexScaling, most int) []v1beta1.VertexScaling {
	seen := map[string]bool{}
	var out []v1beta1.VertexScaling
	for _, v := range vertices {
		if !seen[v.ID] && len(out) < most {
			seen[v.ID] = true
			out = append(out, v)
		}
	}
	return out
}

// send reports one series. A label value the registry would refuse (text that is not UTF-8) drops
// the series, never the scrape, and never panics the collector.
func send(ch chan<- prometheus.Metric, d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
	if m, err := prometheus.NewConstMetric(d, t, v, labels...); err == nil {
		ch <- m
	}
}

// recordedCheckpointTime is when the object's newest recorded checkpoint was triggered: status's,
// or the checkpoint book's when newer (ObjectMetrics.BookCheckpoint), so that the alert on checkpoints not
// completing does not read a status record left to lag by design.
func (o *objectCollector) recordedCheckpointTime(s objectSeries) time.Time {
	var at time.Time
	if s.job.LastCheckpointTime != nil {
		at = s.job.LastCheckpointTime.Time
	}
	if o.m.BookCheckpoint == nil {
		return at
	}
	if jobID, bookAt, ok := o.m.BookCheckpoint(s.kind, s.namespace, s.name); ok && jobID == s.job.JobID && bookAt.After(at) {
		return bookAt
	}
	return at
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// sessionJobConfig is the configuration a session job runs with: its session cluster's, with the
// job's own keys over it, as the job is submitted (see the session view). A checkpoint interval set
// for the whole session cluster is the job's interval too.
func sessionJobConfig(l *namespaceListers, j *v1beta1.FlinkSessionJob) v1beta1.FlinkConfig {
	c, err := l.sessionClusters.FlinkSessionClusters(j.Namespace).Get(j.Spec.ClusterName)
	if err != nil || len(c.Spec.FlinkConfig) == 0 {
		return j.Spec.FlinkConfig
	}
	conf := v1beta1.FlinkConfig{}
	for k, v := range c.Spec.FlinkConfig {
		conf[k] = v
	}
	for k, v := range j.Spec.FlinkConfig {
		conf[k] = v
	}
	return conf
}
