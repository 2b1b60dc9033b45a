// Package config is the operator's configuration: one flytestdlib section, "operator", read from a YAML
// file and flags. Nothing in it may shape a cluster: changing operator config must never redeploy jobs,
// so it is passed to the controller explicitly and kept out of every rendered object and hash.
package config

import (
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/flyteorg/flytestdlib/config"
)

// SectionKey is the name of the operator's section in the config file.
const SectionKey = "operator"

// FlinkURLMode says how the operator reaches a cluster's JobManager REST endpoint.
type FlinkURLMode string

// The ways to reach Flink.
const (
	// URLModeServiceDNS uses in-cluster DNS: http://<service>.<namespace>:<port>.
	URLModeServiceDNS FlinkURLMode = "ServiceDNS"
	// URLModeAPIServerProxy goes through the API server's service proxy (Lyft's useKubectlProxy).
	URLModeAPIServerProxy FlinkURLMode = "APIServerProxy"
	// URLModeTemplate renders FlinkURLTemplate with .Namespace, .Service and .Port.
	URLModeTemplate FlinkURLMode = "Template"
)

// LeaderElection lets several operator replicas run with one of them acting: the others serve
// health and metrics and take over within LeaseDuration when the leader goes.
type LeaderElection struct {
	Enabled bool `json:"enabled" pflag:",Elect one acting replica through a coordination.k8s.io Lease"`
	// LeaseName and LeaseNamespace name the Lease; the namespace defaults to the operator pod's
	// (POD_NAMESPACE) and then to flinkfsm-system. An empty name is derived from the shard
	// (Config.LeaseName), so that the instances of several shards never compete for one Lease.
	LeaseName      string `json:"leaseName" pflag:",Name of the Lease; empty derives it from the shard (limitNamespace, shardSelector)"`
	LeaseNamespace string `json:"leaseNamespace" pflag:",Namespace of the Lease"`
	// LeaseDuration is how long a standby waits before taking over a leader that stopped renewing.
	LeaseDuration config.Duration `json:"leaseDuration" pflag:",How long a lease lasts without renewal"`
	RenewDeadline config.Duration `json:"renewDeadline" pflag:",How long the leader tries to renew before giving up leading"`
	RetryPeriod   config.Duration `json:"retryPeriod" pflag:",How often candidates try to acquire or renew"`
	// DrainTimeout bounds how long in-flight passes may finish after the operator is told to stop
	// (SIGTERM) or loses the lease, before their calls are cancelled.
	DrainTimeout config.Duration `json:"drainTimeout" pflag:",How long in-flight passes may finish when the operator stops"`
}

// AutoscalerDefaults are the job autoscaler's settings for applications that do not set their own
// (docs/autoscaler.md).
type AutoscalerDefaults struct {
	// TargetUtilizationPercent is the share of a subtask's capacity a vertex is sized to use.
	TargetUtilizationPercent int `json:"targetUtilizationPercent" pflag:",Share of a subtask's capacity the autoscaler sizes vertices to use"`
	// UtilizationTolerancePercent is the band around the target in which nothing is rescaled.
	UtilizationTolerancePercent int `json:"utilizationTolerancePercent" pflag:",Band around the target utilisation in which the autoscaler rescales nothing"`
	// CatchUpDuration is how soon a source's backlog should be worked off.
	CatchUpDuration config.Duration `json:"catchUpDuration" pflag:",How soon the autoscaler sizes a source to work off its backlog"`
	// MetricsWindow is how much of the metrics a decision reads.
	MetricsWindow config.Duration `json:"metricsWindow" pflag:",How long the autoscaler collects metrics before a decision"`
	// StabilizationInterval is how long after a change or a start metrics are not read.
	StabilizationInterval config.Duration `json:"stabilizationInterval" pflag:",How long after a change the autoscaler reads no metrics"`
	// ScaleDownDelay is how long a lower parallelism must be recommended before a scale-down.
	ScaleDownDelay config.Duration `json:"scaleDownDelay" pflag:",How long a lower parallelism must be recommended before a vertex scales down"`
	// CoolDown is how long nothing is decided after a way back.
	CoolDown config.Duration `json:"coolDown" pflag:",How long the autoscaler decides nothing after taking a job back"`
	// SampleInterval is how often an autoscaled job's vertex metrics are read.
	SampleInterval config.Duration `json:"sampleInterval" pflag:",How often the autoscaler reads a job's vertex metrics"`
}

// JarPolicy is what the jarURI of a FlinkSessionJob may reach. A jarURI is user input that makes the
// operator open a connection, so by default only https:// to public addresses is fetched.
type JarPolicy struct {
	// AllowHTTP admits http:// as well as https://.
	AllowHTTP bool `json:"allowHTTP" pflag:",Fetch session jobs' jars over plain http:// too"`
	// AllowedHosts, when set, are the only hosts jars come from ("repo.example.com", or ".example.com"
	// for a domain and its subdomains).
	AllowedHosts []string `json:"allowedHosts" pflag:",Only hosts jars may come from; empty for any public host"`
	// AllowedNetworks admits address ranges that are refused otherwise: every address that is not
	// global unicast (loopback, link-local, private, shared, reserved, NAT64 and the like).
	AllowedNetworks []string `json:"allowedNetworks" pflag:",CIDR ranges admitted although not global unicast (private, loopback, link-local, shared, NAT64...)"`
	// MaxBytes bounds a jar's size.
	MaxBytes int64 `json:"maxBytes" pflag:",Largest jar fetched, in bytes"`
	// Timeout bounds one fetch.
	Timeout config.Duration `json:"timeout" pflag:",Longest a jar fetch may take"`
	// Dir is where fetched jars are written until uploaded; the system's temporary directory (the
	// operator pod's emptyDir at /tmp) when empty. Jars are never held in memory.
	Dir string `json:"dir" pflag:",Directory fetched jars are written to until uploaded (default: the temporary directory)"`
	// Concurrency bounds the jar fetches in flight; a job beyond it waits its turn in its phase.
	Concurrency int `json:"concurrency" pflag:",Jar fetches in flight at once"`
}

// IngressPolicy is what the Flink UI's Ingress of an application may claim. Every namespace's
// Ingresses are served by the same ingress controllers: a host an Ingress names takes that host's
// traffic, whoever else uses it, and an annotation configures the shared controller. The spec, which
// a tenant writes, reaches only what this grants; the operator makes no Ingress for a spec that asks
// for more, and says why (docs/security.md).
type IngressPolicy struct {
	// HostDomains are the domains an application's Ingress may claim hosts in: its host and each of
	// its TLS hosts must be one of them or below one, with {{namespace}} replaced by the application's
	// namespace ("{{namespace}}.flink.example.com" gives namespace team-a team-a.flink.example.com and
	// its subdomains, and no other namespace any of them). An entry without {{namespace}} is shared by
	// every namespace. Empty, no application gets an Ingress.
	HostDomains []string `json:"hostDomains" pflag:",Domains the Flink UI Ingress of an application may claim hosts in, {{namespace}} for its namespace; empty for none"`
	// AllowedAnnotations are the annotations an application's spec may set on its Ingress
	// (spec.ingressAnnotations, spec.ingress.annotations): exact keys, or prefixes ending in "*".
	// A spec that sets another gets no Ingress. The default leaves out every annotation that hands the
	// shared controller configuration text, an authentication or a backend (nginx's snippets, auth-*,
	// backend-protocol and the like).
	AllowedAnnotations []string `json:"allowedAnnotations" pflag:",Ingress annotations a spec may set (keys, or prefixes ending in *)"`
	// AllowedClasses are the IngressClasses an application's spec may choose, by
	// spec.ingress.className or the kubernetes.io/ingress.class annotation: a class is a controller
	// and where it listens (an internal network, the internet), which is the platform's to decide.
	// Empty, any class (Lyft's manifests name theirs by the annotation); a spec that names no class
	// gets the cluster's default either way.
	AllowedClasses []string `json:"allowedClasses" pflag:",IngressClasses a spec may choose (spec.ingress.className or the kubernetes.io/ingress.class annotation); empty for any"`
}

// DefaultIngressAnnotations are the annotations a spec may set on its Ingress by default: the
// Lyft operator's ingress class, and settings of the UI's own location (redirects, timeouts, body
// size, source ranges, the namespace's certificate issuer) that hand the controller no text to run.
var DefaultIngressAnnotations = []string{
	"kubernetes.io/ingress.class",
	"nginx.ingress.kubernetes.io/ssl-redirect",
	"nginx.ingress.kubernetes.io/force-ssl-redirect",
	"nginx.ingress.kubernetes.io/proxy-body-size",
	"nginx.ingress.kubernetes.io/proxy-connect-timeout",
	"nginx.ingress.kubernetes.io/proxy-read-timeout",
	"nginx.ingress.kubernetes.io/proxy-send-timeout",
	"nginx.ingress.kubernetes.io/whitelist-source-range",
	"nginx.ingress.kubernetes.io/allowlist-source-range",
	"cert-manager.io/issuer",
}

// Config is the operator's configuration.
type Config struct {
	// LimitNamespace is a comma-separated list of namespaces to watch; empty watches all.
	LimitNamespace string `json:"limitNamespace" pflag:",Comma-separated namespaces to watch; empty for all"`
	// ShardSelector is a Kubernetes label selector ("flinkfsm.io/shard=a", "team in (x,y)"): of the
	// FlinkApplications, FlinkSessionClusters and FlinkSessionJobs in the watched namespaces, the
	// operator sees and acts on only those it selects; empty for all. Several operator instances
	// with selectors that do not overlap share the applications (docs/operations.md, shards).
	ShardSelector string `json:"shardSelector" pflag:",Label selector of the applications, session clusters and session jobs this instance owns; empty for all"`
	// Workers is how many passes run at once; 0 (the default) takes WorkersForCores of the cores the
	// process may use. WorkerCount says which.
	Workers int `json:"workers" pflag:",Number of applications reconciled in parallel; 0 for 6 a core, 12 to 32"`
	// KubeAPIQPS and KubeAPIBurst bound the operator's requests to the API server, per client: status
	// writes and the creation of clusters use separate clients, so neither starves the other.
	KubeAPIQPS     float32 `json:"kubeAPIQPS" pflag:",Sustained requests per second to the API server, per client"`
	KubeAPIBurst   int     `json:"kubeAPIBurst" pflag:",Burst of requests to the API server, per client"`
	MetricsPrefix  string  `json:"metricsPrefix" pflag:",Prefix of every Prometheus metric"`
	MetricsAddress string  `json:"metricsAddress" pflag:",Address of the /metrics and /healthz server"`
	// Profiling serves Go's pprof profiles under /debug/pprof/ on the metrics address, to find where
	// memory or CPU goes in a running operator. Off by default: profiles reveal internals.
	Profiling bool `json:"profiling" pflag:",Serve /debug/pprof/ on the metrics address"`
	// AdmissionPolicyEnforced says that the ValidatingAdmissionPolicy of deploy/policy.yaml is
	// installed and binds every namespace the operator watches, so that an object's Secret
	// references were admitted only for a user who may get those Secrets. The operator cannot tell
	// who wrote an object: without this it refuses every Secret reference a namespace does not allow
	// with flinkfsm.io/allow-secret-references (docs/security.md). deploy/ installs the policy and
	// sets it; off by default, so that an operator without the policy never admits what none checked.
	AdmissionPolicyEnforced bool `json:"admissionPolicyEnforced" pflag:",The pod security admission policy (deploy/policy.yaml) binds every watched namespace: admit the Secret references it admitted"`

	FlinkURLMode     FlinkURLMode `json:"flinkUrlMode" pflag:",How to reach JobManagers: ServiceDNS, APIServerProxy or Template"`
	FlinkURLTemplate string       `json:"flinkUrlTemplate" pflag:",Go template of a JobManager base URL with .Namespace .Service .Port (Template mode)"`
	// IngressURLFormat is the Lyft operator's setting: the host (and optional path) of the Flink UI's
	// Ingress of an application without spec.ingress, with {{$jobCluster}} (or {{name}}) for the
	// application's name and {{namespace}} for its namespace. Empty creates no Ingress.
	IngressURLFormat string `json:"ingressUrlFormat" pflag:",Lyft compatibility: the Flink UI Ingress host format; empty for none"`
	// Ingress is what an application's Flink UI Ingress may claim: its hosts, its annotations.
	Ingress IngressPolicy `json:"ingress"`

	// UseKubectlProxy and ProxyPort are the Lyft operator's settings; they select APIServerProxy mode
	// through a kubectl proxy on localhost.
	UseKubectlProxy bool `json:"useKubectlProxy" pflag:",Lyft compatibility: reach JobManagers through kubectl proxy"`
	ProxyPort       int  `json:"proxyPort" pflag:",Lyft compatibility: the kubectl proxy port"`

	// WaitPollInterval is how soon a phase that waits on Flink looks again; owned-object events come sooner.
	WaitPollInterval config.Duration `json:"waitPollInterval" pflag:",How soon a waiting phase looks again"`
	// StatusPollInterval is how often a running job's status is refreshed.
	StatusPollInterval config.Duration `json:"statusPollInterval" pflag:",How often a running job is observed"`
	// CheckpointRecordInterval is how often a running job's checkpoints are looked at and the newest
	// recorded in status, the recovery fallback when a JobManager is gone: the checkpoint restored
	// then is at most this, a statusPollInterval and one checkpoint interval older than the newest.
	// Clusters whose spec sets no state.checkpoints.num-retained keep enough for it; a smaller count
	// set in the spec is looked at sooner (docs/job-lifecycle.md).
	CheckpointRecordInterval config.Duration `json:"checkpointRecordInterval" pflag:",How often checkpoint progress is written to status"`
	// CheckpointBookInterval is how often the checkpoint book is written: a few ConfigMaps per
	// namespace (named flinkfsm-checkpoints-N) that carry running jobs' newest checkpoints between
	// their records in status, written in batches instead of one status write per job and record.
	// A record waits up to this long for its write, and clusters keep a checkpoint more for it.
	// 0 turns the book off: every record is a status write, as before the book.
	CheckpointBookInterval config.Duration `json:"checkpointBookInterval" pflag:",How often the checkpoint book of running jobs' newest checkpoints is written; 0 records in status only"`
	// CheckpointStatusInterval is how often a running job's recorded checkpoint is written to status
	// (jobStatus.lastCheckpoint, what users and Lyft's tools read) while the checkpoint book carries
	// the records between: so how far status's may lag the book's. It counts in whole
	// checkpointRecordIntervals, at least two (a shorter one, or a checkpointRecordInterval raised
	// past it, means every other record); a job whose spec keeps fewer checkpoints, and so
	// records sooner, writes status as many records apart, sooner. Restores and health take the newer
	// of the two, so it costs no state: only how current status reads, against the API server's
	// writes (at 5,000 checkpointing jobs, 10m is about 9 status writes a second).
	CheckpointStatusInterval config.Duration `json:"checkpointStatusInterval" pflag:",How often a running job's recorded checkpoint is written to status when the checkpoint book carries the records between"`
	// ClusterStartTimeout bounds how long ClusterStarting may go without progress: without
	// Kubernetes taking a new step in starting the cluster's pods (creating, scheduling, running one,
	// or its turning Ready); once all are Ready, the JobManager has that long from the last step to
	// report enough task slots. Past it a first deploy fails and an update rolls back. It runs from
	// the last step rather than from the phase's start because a control plane starting thousands of
	// clusters at once takes minutes for them in all while each keeps moving. A step is counted once
	// (a replaced or evicted pod's retaken steps are none), so a cluster of P pods is given at most
	// (4·P + 1) times this from the start, which status dates and an operator restart keeps.
	ClusterStartTimeout config.Duration `json:"clusterStartTimeout" pflag:",How long a starting cluster may go without Kubernetes taking a step (a pod created, scheduled, running, Ready) before it fails"`
	// ReadinessTimeout bounds how long a submitted job may take to run stable (all tasks running for
	// JobStabilizationPeriod); past it an update rolls back to the last stable spec. An application's
	// spec.readinessTimeoutSeconds overrides it.
	ReadinessTimeout config.Duration `json:"readinessTimeout" pflag:",Deadline for a submitted job to run stable before its update rolls back"`
	// JobStabilizationPeriod is how long a new job must run with all tasks running before the deploy
	// counts as done and the previous cluster is removed; a job failing sooner is rolled back.
	JobStabilizationPeriod config.Duration `json:"jobStabilizationPeriod" pflag:",How long a new job must run before its deploy is done"`
	// SavepointTimeout bounds a savepoint before the operator gives up on it.
	SavepointTimeout config.Duration `json:"savepointTimeout" pflag:",Deadline for a savepoint"`
	// SnapshotKeep is how many of an owner's savepoint FlinkSnapshots the operator keeps, newest
	// first, where its spec.savepointRetention.keep does not say.
	SnapshotKeep int `json:"snapshotKeep" pflag:",How many savepoint FlinkSnapshots of each application are kept by default"`
	// SnapshotMaxAge removes an owner's savepoint FlinkSnapshots older than this, where its
	// spec.savepointRetention.maxAge does not say; zero keeps them regardless of age.
	SnapshotMaxAge config.Duration `json:"snapshotMaxAge" pflag:",Age past which savepoint FlinkSnapshots are removed by default; 0 never"`
	// CancelTimeout bounds how long a cancelled job may stay CANCELLING.
	CancelTimeout config.Duration `json:"cancelTimeout" pflag:",Deadline for a job to finish cancelling"`
	// SubmitGracePeriod is how long a submission that got no answer is given to show up in Flink
	// before it is sent again (with the same job id, which Flink refuses to run twice).
	SubmitGracePeriod config.Duration `json:"submitGracePeriod" pflag:",How long an unanswered job submission is waited for before it is sent again"`

	// MaxRetries is how many failed attempts a phase may make, per visit, before it gives up.
	MaxRetries          int             `json:"maxRetries" pflag:",Retries of a failing step before the phase gives up"`
	BaseBackoffDuration config.Duration `json:"baseBackoffDuration" pflag:",First retry delay"`
	MaxBackoffDuration  config.Duration `json:"maxBackoffDuration" pflag:",Longest retry delay"`
	// DefaultMaxCheckpointRestoreAge applies when an application does not set maxCheckpointRestoreAgeSeconds.
	DefaultMaxCheckpointRestoreAge config.Duration `json:"defaultMaxCheckpointRestoreAge" pflag:",Oldest checkpoint recovery may use by default"`

	// Jars is what the jarURIs of session jobs may reach.
	Jars JarPolicy `json:"jars"`
	// LeaderElection is off by default (one replica); deploy/ turns it on with two.
	LeaderElection LeaderElection `json:"leaderElection"`
	// Autoscaler is what applications with spec.autoscaler get where they set nothing.
	Autoscaler AutoscalerDefaults `json:"autoscaler"`

	// StallTimeout is how long objects may wait in the workqueue while no worker moves before
	// /healthz reports the operator unhealthy. It must exceed the longest pass, a jar fetch included.
	StallTimeout config.Duration `json:"stallTimeout" pflag:",How long work may wait with no worker moving before /healthz fails"`
	// SlowPassLog logs every pass that takes longer, with the object, how long the pass took and
	// how long the object waited for a worker, to tell when and for whom passes were slow where the
	// reconcile histogram only says how many; 0 logs none.
	SlowPassLog config.Duration `json:"slowPassLog" pflag:",Log each pass that takes longer than this; 0 for none"`
}

// WorkerCount is how many passes run at once: Workers when set, otherwise WorkersForCores of the cores
// this process may use (GOMAXPROCS, which follows the container's CPU limit).
func (c *Config) WorkerCount() int {
	if c.Workers > 0 {
		return c.Workers
	}
	return WorkersForCores(runtime.GOMAXPROCS(0))
}

// WorkersForCores is the default worker count of a process that may use the given cores: 6 a core, at
// least 12 and at most 32. A pass mostly waits on Flink and the API server, so several share a core,
// and at 100 applications deployed at once 16 workers had left each waiting 1 to 2 s for one. But
// their answers wait for a core too: at 10,000 applications on the two cores the API server also
// used, 12 workers kept reconcile p99 at 31 to 35 ms where 32 took it to 37 to 84 ms (61.5 ms on a
// slower machine), and deployed 100 applications as fast (docs/benchmarks/2026-11-30-10000-workers.md).
func WorkersForCores(cores int) int {
	return min(max(6*cores, 12), 32)
}

// Default is the configuration used when nothing is set.
func Default() *Config {
	return &Config{
		Workers:                        0,
		KubeAPIQPS:                     100,
		KubeAPIBurst:                   200,
		MetricsPrefix:                  "flinkfsm",
		MetricsAddress:                 ":10254",
		FlinkURLMode:                   URLModeServiceDNS,
		ProxyPort:                      8001,
		WaitPollInterval:               config.Duration{Duration: 2 * time.Second},
		StatusPollInterval:             config.Duration{Duration: 10 * time.Second},
		CheckpointRecordInterval:       config.Duration{Duration: time.Minute},
		CheckpointBookInterval:         config.Duration{Duration: 10 * time.Second},
		CheckpointStatusInterval:       config.Duration{Duration: 10 * time.Minute},
		ClusterStartTimeout:            config.Duration{Duration: 5 * time.Minute},
		ReadinessTimeout:               config.Duration{Duration: 3 * time.Minute},
		JobStabilizationPeriod:         config.Duration{Duration: 10 * time.Second},
		SavepointTimeout:               config.Duration{Duration: 10 * time.Minute},
		SnapshotKeep:                   10,
		CancelTimeout:                  config.Duration{Duration: 5 * time.Minute},
		SubmitGracePeriod:              config.Duration{Duration: 30 * time.Second},
		MaxRetries:                     10,
		BaseBackoffDuration:            config.Duration{Duration: 500 * time.Millisecond},
		MaxBackoffDuration:             config.Duration{Duration: 30 * time.Second},
		DefaultMaxCheckpointRestoreAge: config.Duration{Duration: time.Hour},
		Autoscaler: AutoscalerDefaults{TargetUtilizationPercent: 70, UtilizationTolerancePercent: 10,
			CatchUpDuration: config.Duration{Duration: 15 * time.Minute}, MetricsWindow: config.Duration{Duration: 10 * time.Minute},
			StabilizationInterval: config.Duration{Duration: 5 * time.Minute}, ScaleDownDelay: config.Duration{Duration: time.Hour},
			CoolDown: config.Duration{Duration: time.Hour}, SampleInterval: config.Duration{Duration: 30 * time.Second}},
		Jars:    JarPolicy{MaxBytes: 256 << 20, Timeout: config.Duration{Duration: 2 * time.Minute}, Concurrency: 4},
		Ingress: IngressPolicy{AllowedAnnotations: slices.Clone(DefaultIngressAnnotations)},
		LeaderElection: LeaderElection{
			LeaseDuration: config.Duration{Duration: 15 * time.Second},
			RenewDeadline: config.Duration{Duration: 10 * time.Second},
			RetryPeriod:   config.Duration{Duration: 2 * time.Second},
			DrainTimeout:  config.Duration{Duration: 20 * time.Second},
		},
		StallTimeout: config.Duration{Duration: 5 * time.Minute},
	}
}

var section = config.MustRegisterSection(SectionKey, Default())

// Get returns the configuration loaded into the registered section.
func Get() *Config { return section.GetConfig().(*Config) }

// Namespaces lists the watched namespaces; nil means all.
func (c *Config) Namespaces() []string {
	var out []string
	for _, ns := range strings.Split(c.LimitNamespace, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}

// Validate reports settings that cannot work, before the operator starts.
func (c *Config) Validate() error {
	if p := c.MetricNamePrefix(); !metricPrefixSyntax.MatchString(p) {
		return fmt.Errorf("operator.metricsPrefix %q must be a Prometheus name: letters, digits and underscores, "+
			"not starting with a digit", c.MetricsPrefix)
	}
	if c.Workers < 0 {
		return fmt.Errorf("operator.workers must be at least 1, or 0 for the default (6 a core, 12 to 32)")
	}
	if c.StallTimeout.Duration <= c.Jars.Timeout.Duration {
		// A pass may fetch a jar; a worker doing so has not stalled.
		return fmt.Errorf("operator.stallTimeout (%s) must exceed operator.jars.timeout (%s)", c.StallTimeout.Duration, c.Jars.Timeout.Duration)
	}
	if _, err := c.URLResolver(""); err != nil {
		return err
	}
	if _, err := c.Shard(); err != nil {
		return err
	}
	return c.Ingress.Validate()
}

// URLResolver returns the function that names a JobManager's REST base URL. apiServer is the API
// server's URL, used in APIServerProxy mode when no kubectl proxy is configured.
func (c *Config) URLResolver(apiServer string) (func(namespace, service string, port int32) string, error) {
	mode := c.FlinkURLMode
	if c.UseKubectlProxy {
		mode = URLModeAPIServerProxy
		apiServer = fmt.Sprintf("http://localhost:%d", c.ProxyPort)
	}
	switch mode {
	case URLModeServiceDNS, "":
		return func(ns, svc string, port int32) string { return fmt.Sprintf("http://%s.%s:%d", svc, ns, port) }, nil
	case URLModeAPIServerProxy:
		base := strings.TrimSuffix(apiServer, "/")
		return func(ns, svc string, port int32) string {
			return fmt.Sprintf("%s/api/v1/namespaces/%s/services/%s:%d/proxy", base, ns, svc, port)
		}, nil
	case URLModeTemplate:
		t, err := template.New("flinkUrlTemplate").Option("missingkey=error").Parse(c.FlinkURLTemplate)
		if err != nil {
			return nil, fmt.Errorf("operator.flinkUrlTemplate: %w", err)
		}
		return func(ns, svc string, port int32) string {
			var b strings.Builder
			_ = t.Execute(&b, struct {
				Namespace, Service string
				Port               int32
			}{ns, svc, port})
			return strings.TrimSuffix(b.String(), "/")
		}, nil
	default:
		return nil, fmt.Errorf("operator.flinkUrlMode %q is not one of ServiceDNS, APIServerProxy, Template", mode)
	}
}

var metricPrefixSyntax = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// MetricNamePrefix is metricsPrefix as the start of a Prometheus metric name. Colons, which
// Prometheus reserves for recording rules and Lyft's operator put between scopes, become
// underscores, and trailing separators go ("flinkk8soperator:" becomes "flinkk8soperator").
func (c *Config) MetricNamePrefix() string {
	return strings.Trim(strings.ReplaceAll(c.MetricsPrefix, ":", "_"), "_")
}
