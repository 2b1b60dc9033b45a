package main

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// The Flink client's caps on a successful answer, per call, as pkg/controller/flink/client/answers.go
// sets them when this was written: answers built just under them are the largest the client reads
// whole. If the caps change, the soak still runs; its answers are then no longer "just under".
const (
	capOverview    = 16 << 10 // GET /overview
	capJobs        = 1 << 20  // GET /jobs
	capJob         = 4 << 20  // GET /jobs/:jobid
	capJobValues   = 48 << 10 // array elements and object members GET /jobs/:jobid may hold
	capExceptions  = 2 << 20  // GET /jobs/:jobid/exceptions
	capCheckpoints = 1 << 20  // GET /jobs/:jobid/checkpoints
	// justUnder is how far under a cap a hostile answer stays.
	justUnder = 64
)

// tenant is one hostile tenant of the soak, in a namespace of its own: a FlinkApplication whose
// JobManager (the simulator, through faults) answers as a hostile image would, or a session cluster
// with a session job whose jarURI names a hostile jar host.
type tenant struct {
	name string
	// what says what it does, for the report.
	what string
	// faults are its JobManager's, for a FlinkApplication tenant.
	faults flinksim.Faults
	// jarPath is its jar host's path, for a session-job tenant.
	jarPath string
	// load, when set, is what its FlinkApplication's job runs (a JobManager whose metrics are hostile).
	load *flinksim.Load
	// spec, when set, changes its FlinkApplication's spec: the hostile input is the spec itself.
	spec func(*v1beta1.FlinkApplication)
}

func (t tenant) namespace() string { return "hostile-" + t.name }

// kind is what the tenant creates, for the report.
func (t tenant) kind() string {
	if t.jarPath != "" {
		return "FlinkSessionJob"
	}
	return "FlinkApplication"
}

// Object names inside each tenant's namespace.
const (
	tenantApp     = "tenant"
	tenantCluster = "session"
	tenantJob     = "job"
)

// hostileTenants are issue 25's ten, and three that try what issue 55 bounded: a JobManager whose
// job has more vertices than the autoscaler tracks, each listing megabytes of metric names; a spec
// whose UI Ingress claims another namespace's host with configuration-snippet annotations; and a
// pod template near the API server's object size. Issue 25's ten are: huge and deeply nested answers, slow-drip answers, a
// JobManager that never answers, a 200 MiB jar, a redirect loop, a jar host that stalls (and one
// that drips). The answer tenants let the job be submitted and then answer its reads hostilely
// (huge-job, dense-job and nested answer the fence's 404 hostilely too, which costs the client
// only the bounded read of an error), except huge-fence, which answers the reads the operator
// makes before any job exists.
func hostileTenants() []tenant {
	huge := func(bytes int) flinksim.HostileAnswer {
		return flinksim.HostileAnswer{Shape: flinksim.ShapeHuge, Bytes: bytes - justUnder}
	}
	nested := func(bytes int) flinksim.HostileAnswer {
		return flinksim.HostileAnswer{Shape: flinksim.ShapeNested, Bytes: bytes - justUnder}
	}
	// The drip spares error answers, so that the operator finds no job before it submits one (its
	// fence reads GET /jobs/:id) and then meets the drip in every read of the job, at the share of
	// the client's answer budget a successful answer of that length takes.
	drip := func(bytes int) flinksim.HostileAnswer {
		return flinksim.HostileAnswer{Bytes: bytes - justUnder, BytesPerSecond: 2, SuccessOnly: true}
	}
	jobReads := func(answer func(int) flinksim.HostileAnswer) map[string]flinksim.HostileAnswer {
		return map[string]flinksim.HostileAnswer{
			flinksim.EndpointJob:         answer(capJob),
			flinksim.EndpointCheckpoints: answer(capCheckpoints),
			flinksim.EndpointExceptions:  answer(capExceptions),
		}
	}
	return []tenant{
		{name: "huge-job", what: "GET /jobs/:id, /checkpoints, /exceptions: arrays of {} just under each body cap",
			faults: flinksim.Faults{Hostile: jobReads(huge)}},
		{name: "huge-fence", what: "GET /jobs and /overview, read before any job exists: arrays of {} just under each body cap",
			faults: flinksim.Faults{Hostile: map[string]flinksim.HostileAnswer{
				flinksim.EndpointJobs: huge(capJobs), flinksim.EndpointOverview: huge(capOverview)}}},
		{name: "dense-job", what: "GET /jobs/:id just under its byte cap and its value cap: vertices with long names, the costliest answer the client decodes",
			faults: flinksim.Faults{Hostile: map[string]flinksim.HostileAnswer{flinksim.EndpointJob: denseJob()}}},
		{name: "nested", what: "GET /jobs/:id, /checkpoints, /exceptions: arrays nested as deep as just under each body cap allows",
			faults: flinksim.Faults{Hostile: jobReads(nested)}},
		{name: "drip", what: "GET /jobs/:id, /checkpoints, /exceptions: 2 bytes a second, announcing a Content-Length just under each body cap",
			faults: flinksim.Faults{Hostile: jobReads(drip)}},
		{name: "silent", what: "a JobManager that accepts every connection and never answers",
			faults: flinksim.Faults{Hang: map[string]bool{flinksim.AnyEndpoint: true}}},
		{name: "jar-large", what: "a session job whose jar is large (-soak-jar-mib), streamed", jarPath: jarLarge},
		{name: "jar-redirect-loop", what: "a session job whose jar host redirects to itself forever", jarPath: jarRedirect},
		{name: "jar-stall", what: "a session job whose jar host accepts the request and never answers", jarPath: jarStall},
		{name: "jar-drip", what: fmt.Sprintf("a session job whose jar host announces %d MiB and sends 2 bytes a second", dripJarBytes>>20), jarPath: jarDrip},
		{name: "autoscaler-names", what: "an autoscaled job of 250 vertices, each subtask listing 2,000 metric names of 1 KiB",
			load: wideJobWithLongMetricNames(), spec: autoscaled},
		{name: "ingress-claim", what: "a UI Ingress for another namespace's host, with configuration-snippet and auth-url annotations",
			spec: claimsAnotherNamespacesHost},
		{name: "template-large", what: "a pod template of about 1 MiB (environment values), rendered at every deploy", spec: largePodTemplate},
	}
}

// wideJobWithLongMetricNames is a job the autoscaler may not track (more vertices than its budget),
// whose every vertex lists metric names the operator must not keep.
func wideJobWithLongMetricNames() *flinksim.Load {
	l := &flinksim.Load{Input: flinksim.Constant(100)}
	for i := 0; i < 250; i++ {
		l.Vertices = append(l.Vertices, flinksim.LoadVertex{Name: fmt.Sprintf("Map %d", i), Capacity: 1000,
			UserMetrics: 2000, UserMetricNameBytes: 1024})
	}
	l.Vertices[0].Name, l.Vertices[0].PendingRecords = "Source: input", true
	return l
}

func autoscaled(a *v1beta1.FlinkApplication) {
	a.Spec.FlinkConfig["jobmanager.scheduler"] = "adaptive"
	a.Spec.Autoscaler = &v1beta1.AutoscalerSpec{Mode: v1beta1.AutoscalerApply}
}

// claimsAnotherNamespacesHost asks for the UI at a host of the ordinary applications' namespace,
// with annotations that would hand the shared ingress controller configuration and a backend.
func claimsAnotherNamespacesHost(a *v1beta1.FlinkApplication) {
	a.Spec.Ingress = &v1beta1.IngressSpec{Template: "ui.bench.flink.test", Annotations: map[string]string{
		"nginx.ingress.kubernetes.io/configuration-snippet": "more_set_headers \"X-Owned: yes\";",
		"nginx.ingress.kubernetes.io/auth-url":              "http://attacker.example/auth",
	}}
}

// largePodTemplate gives the JobManager a pod template of about 1 MiB: what the operator caches,
// hashes and renders for one object.
func largePodTemplate(a *v1beta1.FlinkApplication) {
	var env []corev1.EnvVar
	for i := 0; i < 256; i++ {
		env = append(env, corev1.EnvVar{Name: fmt.Sprintf("PADDING_%d", i), Value: strings.Repeat("x", 4000)})
	}
	a.Spec.PodTemplate = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "flink-main-container", Env: env}}}}
}

// denseJob is GET /jobs/:id at its costliest for a client that checks its shape before decoding:
// just under the byte cap and the value cap at once, every value decoded into a struct with a
// long string. Each vertex {"name":"…"} is two values (the element and its member); a few hundred
// values are left for the rest of the answer.
func denseJob() flinksim.HostileAnswer {
	vertices := (capJobValues - 256) / 2
	perVertex := (capJob + vertices - 1) / vertices // bytes per vertex, its comma included
	name := strings.Repeat("x", perVertex-1-len(`{"name":""}`))
	return flinksim.HostileAnswer{Shape: flinksim.ShapeHuge, Bytes: capJob - justUnder, Element: `{"name":"` + name + `"}`}
}

// createTenant creates one tenant's namespace and objects; for a FlinkApplication tenant its
// JobManager's faults are set first, so that its first answer is already hostile.
func (b *bench) createTenant(ctx context.Context, t tenant, jars *jarHosts) error {
	ns, err := b.namespace(ctx, t.namespace())
	if err != nil {
		return err
	}
	if t.jarPath == "" {
		b.env.Fleet.SetFaults(ns, tenantApp, t.faults)
		if t.load != nil {
			if err := b.env.Fleet.SetLoad(ns, tenantApp, *t.load); err != nil {
				return err
			}
		}
		app := benchApp(ns, tenantApp, 1, "")
		if t.spec != nil {
			t.spec(app)
		}
		_, err := b.apps.FlinkV1beta1().FlinkApplications(ns).Create(ctx, app, metav1.CreateOptions{})
		return err
	}
	if _, err := b.apps.FlinkV1beta1().FlinkSessionClusters(ns).Create(ctx, sessionCluster(ns), metav1.CreateOptions{}); err != nil {
		return err
	}
	one := int32(1)
	job := &v1beta1.FlinkSessionJob{ObjectMeta: metav1.ObjectMeta{Name: tenantJob, Namespace: ns},
		Spec: v1beta1.FlinkSessionJobSpec{ClusterName: tenantCluster, DeleteMode: v1beta1.DeleteModeForceCancel,
			Job: v1beta1.JobSpec{JarURI: jars.uri(t.jarPath), EntryClass: "org.apache.flink.WordCount",
				Parallelism: &one, UpgradeMode: v1beta1.UpgradeModeStateless}}}
	_, err = b.apps.FlinkV1beta1().FlinkSessionJobs(ns).Create(ctx, job, metav1.CreateOptions{})
	return err
}

// sessionCluster is a hostile session job's cluster: one TaskManager of two slots, small pods,
// the image and Flink version of every other application of the bench.
func sessionCluster(ns string) *v1beta1.FlinkSessionCluster {
	small := &corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}
	slots, tms := int32(2), int32(1)
	return &v1beta1.FlinkSessionCluster{ObjectMeta: metav1.ObjectMeta{Name: tenantCluster, Namespace: ns},
		Spec: v1beta1.FlinkSessionClusterSpec{
			ClusterSpec: v1beta1.ClusterSpec{
				Image: "flinkfsm.test/wordcount:v1", FlinkVersion: "1.20",
				FlinkConfig:      v1beta1.FlinkConfig{"state.savepoints.dir": "file:///flink/savepoints"},
				JobManagerConfig: v1beta1.JobManagerConfig{Resources: small},
			},
			TaskManagerConfig: v1beta1.SessionTaskManagerConfig{
				TaskManagerConfig: v1beta1.TaskManagerConfig{Resources: small, TaskSlots: &slots}, Replicas: &tms},
		}}
}

// tenantResult is what became of one hostile tenant, and what it cost the operator to ask.
type tenantResult struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Kind      string `json:"kind"`
	What      string `json:"what"`
	// Phase and Reason are its object's at the end of the soak (the session job's, for a jar
	// tenant), Error its last error. None is judged: a hostile tenant may fail as it likes.
	Phase  string `json:"phase"`
	Reason string `json:"reason,omitempty"`
	Error  string `json:"error,omitempty"`
	// Requests are the calls its hostile party served: the JobManager's by endpoint, or the jar
	// host's. They show that the hostility was met, not just configured.
	Requests map[string]int64 `json:"requests"`
}

// tenantOutcome reads what became of a tenant.
func (b *bench) tenantOutcome(ctx context.Context, t tenant, jars *jarHosts) tenantResult {
	ns := t.namespace()
	r := tenantResult{Name: t.name, Namespace: ns, Kind: t.kind(), What: t.what}
	var status *v1beta1.MachineStatus
	if t.jarPath == "" {
		r.Requests = b.env.Fleet.RequestsByEndpoint(ns)
		app, err := b.apps.FlinkV1beta1().FlinkApplications(ns).Get(ctx, tenantApp, metav1.GetOptions{})
		if err != nil {
			r.Phase = "unreadable: " + err.Error()
			return r
		}
		r.Phase, status = string(app.Status.Phase), &app.Status.MachineStatus
	} else {
		r.Requests = map[string]int64{"GET " + t.jarPath: int64(jars.requestsTo(t.jarPath))}
		for endpoint, n := range b.env.Fleet.RequestsByEndpoint(ns) {
			r.Requests[endpoint] = n
		}
		job, err := b.apps.FlinkV1beta1().FlinkSessionJobs(ns).Get(ctx, tenantJob, metav1.GetOptions{})
		if err != nil {
			r.Phase = "unreadable: " + err.Error()
			return r
		}
		r.Phase, status = string(job.Status.Phase), &job.Status.MachineStatus
	}
	r.Reason = shorten(status.Reason, 200)
	if e := status.LastSeenError; e != nil {
		r.Error = shorten(e.Method+": "+e.AppError, 200)
	}
	return r
}

// shorten keeps the first n bytes of s, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
