package flinksim

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
)

const (
	testNS    = "flink"
	testProps = "taskmanager.numberOfTaskSlots: 2\nstate.savepoints.dir: s3://bucket/sp\n# comment\n\nexecution.checkpointing.interval: 10s"
)

// fleetEnv is a Fleet on a fake Kubernetes API, served on a loopback port.
type fleetEnv struct {
	t    *testing.T
	kube kubernetes.Interface
	clk  *clocktesting.FakeClock
	f    *Fleet
	base string
}

func newFleetEnv(t *testing.T) *fleetEnv {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	kube := fake.NewClientset()
	clk := clocktesting.NewFakeClock(epoch)
	f := NewFleet(kube, FleetOptions{Clock: clk, Logf: t.Logf})
	if err := f.Run(ctx); err != nil {
		t.Fatal(err)
	}
	addr, err := ListenAndServe(ctx, ":0", f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("ListenAndServe bound %s, want loopback", addr)
	}
	return &fleetEnv{t: t, kube: kube, clk: clk, f: f, base: "http://" + addr}
}

func pod(app, hash, role, name, image string, ready bool) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: name, Labels: map[string]string{
			LabelApp: app, LabelAppHash: hash, LabelDeploymentType: role,
		}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "sidecar", Image: "busybox", Env: []corev1.EnvVar{{Name: flinkPropertiesEnv, Value: "parallelism.default: 9"}}},
			{Name: role, Image: image, Env: []corev1.EnvVar{{Name: flinkPropertiesEnv, Value: testProps}}},
		}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
}

func (e *fleetEnv) create(p *corev1.Pod) {
	e.t.Helper()
	if _, err := e.kube.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *fleetEnv) setReady(name string, ready bool) {
	e.t.Helper()
	p, err := e.kube.CoreV1().Pods(testNS).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	if _, err := e.kube.CoreV1().Pods(testNS).UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *fleetEnv) delete(name string) {
	e.t.Helper()
	if err := e.kube.CoreV1().Pods(testNS).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// request calls the Fleet; err is a transport failure (JobManager down).
func (e *fleetEnv) request(method, path, body string) (int, map[string]any, error) {
	req, _ := http.NewRequest(method, e.base+path, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m, nil
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (e *fleetEnv) waitUp(service string, wantTMs int) {
	e.t.Helper()
	eventually(e.t, service+" up with "+itoa(wantTMs)+" taskmanagers", func() bool {
		status, m, err := e.request("GET", "/"+testNS+"/"+service+"/v1/overview", "")
		return err == nil && status == 200 && num(m["taskmanagers"]) == int64(wantTMs)
	})
}

func (e *fleetEnv) waitDown(service string) {
	e.t.Helper()
	eventually(e.t, service+" down", func() bool {
		_, _, err := e.request("GET", "/"+testNS+"/"+service+"/overview", "")
		return err != nil
	})
}

func TestFleetFollowsPods(t *testing.T) {
	e := newFleetEnv(t)
	svc := "wordcount-abc123"

	e.create(pod("wordcount", "abc123", RoleJobManager, "wordcount-abc123-jm-0", "flink:1.20", false))
	if _, _, err := e.request("GET", "/"+testNS+"/"+svc+"/overview", ""); err == nil {
		t.Fatal("JobManager answered before its pod was Ready")
	}
	e.setReady("wordcount-abc123-jm-0", true)
	e.waitUp(svc, 0)

	e.create(pod("wordcount", "abc123", RoleTaskManager, "wordcount-abc123-tm-0", "flink:1.20", true))
	e.create(pod("wordcount", "abc123", RoleTaskManager, "wordcount-abc123-tm-1", "flink:1.20", false))
	e.waitUp(svc, 1)
	e.setReady("wordcount-abc123-tm-1", true)
	e.waitUp(svc, 2)
	_, m, _ := e.request("GET", "/"+testNS+"/"+svc+"/overview", "")
	if num(m["slots-total"]) != 4 {
		t.Fatalf("slots-total %v, want 2 TMs × 2 slots", m["slots-total"])
	}

	status, m, err := e.request("POST", "/"+testNS+"/"+svc+"/jars/app.jar/run", `{"parallelism":4}`)
	if err != nil || status != 200 {
		t.Fatalf("run: %d %v %v", status, m, err)
	}
	jobID := m["jobid"].(string)
	e.clk.Step(time.Second)
	jm := e.f.JobManager(testNS, svc)
	if jm == nil || jm.Name() != "wordcount-abc123-jm-0" {
		t.Fatalf("JobManager %v", jm)
	}
	if jobs := jm.Jobs(); len(jobs) != 1 || !jobs[0].TasksRunning {
		t.Fatalf("jobs %+v", jobs)
	}
	// The cluster's own FLINK_PROPERTIES are used, not the sidecar's.
	_, cfg, _ := e.request("GET", "/"+testNS+"/"+svc+"/jobs/"+jobID+"/checkpoints/config", "")
	if num(cfg["interval"]) != 10000 {
		t.Fatalf("checkpoint config %v", cfg)
	}

	// Losing a TaskManager fails the job over.
	e.delete("wordcount-abc123-tm-1")
	e.waitUp(svc, 1)
	if got := jm.Jobs()[0].State; got != "RESTARTING" {
		t.Fatalf("state after TaskManager loss %s", got)
	}

	// The JobManager pod going unready loses the JobManager (no HA).
	e.setReady("wordcount-abc123-jm-0", false)
	e.waitDown(svc)
	if e.f.JobManager(testNS, svc) != nil {
		t.Fatal("JobManager still registered while down")
	}
	records := e.f.Timeline().Jobs(testNS + "/wordcount")
	if len(records) != 1 || records[0].LostAt.IsZero() {
		t.Fatalf("timeline %+v", records)
	}

	e.setReady("wordcount-abc123-jm-0", true)
	e.waitUp(svc, 1)
	_, m, _ = e.request("GET", "/"+testNS+"/"+svc+"/jobs", "")
	if len(m["jobs"].([]any)) != 0 {
		t.Fatalf("a restarted JobManager without HA must have no jobs: %v", m)
	}

	e.delete("wordcount-abc123-jm-0")
	e.waitDown(svc)
}

func TestFleetJobManagerDiesWithItsPod(t *testing.T) {
	e := newFleetEnv(t)
	svc := "app-h1"
	e.create(pod("app", "h1", RoleJobManager, "app-h1-jm-a", "flink:1.20", true))
	e.create(pod("app", "h1", RoleTaskManager, "app-h1-tm", "flink:1.20", true))
	e.waitUp(svc, 1)
	if status, _, _ := e.request("POST", "/"+testNS+"/"+svc+"/jars/x.jar/run", ""); status != 200 {
		t.Fatalf("run: %d", status)
	}
	// A second jobmanager pod becomes Ready before the first one goes away,
	// as in a rolling replacement: the JobManager process still dies.
	e.create(pod("app", "h1", RoleJobManager, "app-h1-jm-b", "flink:1.20", true))
	e.delete("app-h1-jm-a")
	eventually(t, "JobManager moved to the new pod", func() bool {
		jm := e.f.JobManager(testNS, svc)
		return jm != nil && jm.Name() == "app-h1-jm-b"
	})
	if jobs := e.f.JobManager(testNS, svc).Jobs(); len(jobs) != 0 {
		t.Fatalf("jobs survived the JobManager pod: %+v", jobs)
	}
	if records := e.f.Timeline().Jobs(testNS + "/app"); len(records) != 1 || records[0].LostAt.IsZero() ||
		records[0].JobManager != "app-h1-jm-a" {
		t.Fatalf("timeline %+v", records)
	}
}

func TestFleetRoutingJarsFaultsAndSharedStorage(t *testing.T) {
	e := newFleetEnv(t)
	e.f.SetImageJars("flink:slim", []string{"only.jar"})
	e.create(pod("app", "v1", RoleJobManager, "app-v1-jm", "flink:1.20", true))
	e.create(pod("app", "v1", RoleTaskManager, "app-v1-tm", "flink:1.20", true))
	e.create(pod("app", "v2", RoleJobManager, "app-v2-jm", "flink:slim", true))
	e.create(pod("app", "v2", RoleTaskManager, "app-v2-tm", "flink:slim", true))
	e.create(pod("other", "v1", RoleJobManager, "other-v1-jm", "flink:1.20", true))
	e.waitUp("app-v1", 1)
	e.waitUp("app-v2", 1)
	e.waitUp("other-v1", 0)

	// Unknown clusters and short paths are transport failures.
	for _, path := range []string{"/" + testNS + "/app-v9/overview", "/x"} {
		if _, _, err := e.request("GET", path, ""); err == nil {
			t.Fatalf("%s answered", path)
		}
	}
	if status, m, _ := e.request("GET", "/"+testNS+"/app-v1/v1/nope", ""); status != 404 || errorText(m) != "Unable to load requested file /v1/nope." {
		t.Fatalf("unknown route through the fleet: %d %v", status, m)
	}

	// Jars follow the JobManager's image.
	if status, _, _ := e.request("POST", "/"+testNS+"/app-v2/jars/any.jar/run", ""); status != 500 {
		t.Fatalf("jar absent from image: %d", status)
	}
	status, m, _ := e.request("POST", "/"+testNS+"/app-v1/jars/any.jar/run", "")
	if status != 200 {
		t.Fatalf("run: %d %v", status, m)
	}
	oldJob := m["jobid"].(string)
	e.clk.Step(time.Second)

	// A savepoint of the old cluster restores in the new one.
	_, m, _ = e.request("POST", "/"+testNS+"/app-v1/jobs/"+oldJob+"/savepoints", `{"cancel-job":true}`)
	trigger := m["request-id"].(string)
	e.clk.Step(2 * time.Second)
	_, m, _ = e.request("GET", "/"+testNS+"/app-v1/jobs/"+oldJob+"/savepoints/"+trigger, "")
	loc := at(m, "operation", "location").(string)
	if !e.f.Storage().Exists(loc) {
		t.Fatal("savepoint not in the fleet's storage")
	}
	status, m, _ = e.request("POST", "/"+testNS+"/app-v2/jars/only.jar/run", `{"savepointPath":"`+loc+`"}`)
	if status != 200 {
		t.Fatalf("restore run: %d %v", status, m)
	}
	e.clk.Step(time.Second)
	newJob := m["jobid"].(string)
	_, m, _ = e.request("GET", "/"+testNS+"/app-v2/jobs/"+newJob+"/checkpoints", "")
	if at(m, "latest", "restored", "external_path") != loc {
		t.Fatalf("restored %v", at(m, "latest", "restored"))
	}
	if overlaps := e.f.Timeline().Overlaps(testNS + "/app"); len(overlaps) != 0 {
		t.Fatalf("overlaps %+v", overlaps)
	}

	// Faults apply per app, to current and future JobManagers.
	e.f.SetFaults(testNS, "app", Faults{ErrorRate: map[string]float64{EndpointOverview: 1}})
	for _, svc := range []string{"app-v1", "app-v2"} {
		if status, _, _ := e.request("GET", "/"+testNS+"/"+svc+"/overview", ""); status < 500 {
			t.Fatalf("%s: fault not applied (%d)", svc, status)
		}
	}
	if status, _, _ := e.request("GET", "/"+testNS+"/other-v1/overview", ""); status != 200 {
		t.Fatalf("fault leaked to another app: %d", status)
	}
	e.create(pod("app", "v3", RoleJobManager, "app-v3-jm", "flink:1.20", true))
	eventually(t, "app-v3 up", func() bool { return e.f.JobManager(testNS, "app-v3") != nil })
	if status, _, _ := e.request("GET", "/"+testNS+"/app-v3/overview", ""); status < 500 {
		t.Fatalf("fault not applied to a new JobManager (%d)", status)
	}

	// CrashJobManager empties a JobManager that stays reachable.
	if !e.f.CrashJobManager(testNS, "app-v2") {
		t.Fatal("CrashJobManager: not up")
	}
	if status, m, _ := e.request("GET", "/"+testNS+"/app-v2/jobs", ""); status != 200 || len(m["jobs"].([]any)) != 0 {
		t.Fatalf("after crash: %d %v", status, m)
	}
}

func TestParseFlinkProperties(t *testing.T) {
	got := ParseFlinkProperties("a: 1\n  b:two words \n# c: 3\nbroken\ns3.endpoint: http://minio:9000\n")
	want := map[string]string{"a": "1", "b": "two words", "s3.endpoint": "http://minio:9000"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s = %q, want %q", k, got[k], v)
		}
	}
}

// TestFleetRecreatedJobManagerStartsEmpty deletes a cluster's pods, as deleting
// its Deployments does, and brings them back under the same names: the new
// JobManager process knows no job (no HA), so a job id can be used again and a
// job restored from the old job's retained checkpoint.
func TestFleetRecreatedJobManagerStartsEmpty(t *testing.T) {
	e := newFleetEnv(t)
	svc := "app-h1"
	props := "taskmanager.numberOfTaskSlots: 2\nexecution.checkpointing.interval: 10s\n" +
		"state.checkpoints.dir: " + ckpDir + "\nexecution.checkpointing.externalized-checkpoint-retention: RETAIN_ON_CANCELLATION"
	withProps := func(p *corev1.Pod) *corev1.Pod {
		p.Spec.Containers[1].Env[0].Value = props
		return p
	}
	createCluster := func() {
		e.create(withProps(pod("app", "h1", RoleJobManager, "app-h1-jm", "flink:1.20", true)))
		e.create(withProps(pod("app", "h1", RoleTaskManager, "app-h1-tm", "flink:1.20", true)))
	}
	createCluster()
	e.waitUp(svc, 1)
	jobID := strings.Repeat("5a", 16)
	run := func(body string) (int, map[string]any) {
		status, m, err := e.request("POST", "/"+testNS+"/"+svc+"/jars/app.jar/run", body)
		if err != nil {
			t.Fatal(err)
		}
		return status, m
	}
	if status, m := run(`{"jobId":"` + jobID + `"}`); status != 200 {
		t.Fatalf("run: %d %v", status, m)
	}
	e.clk.Step(11 * time.Second) // chk-1
	chk := ckpDir + "/" + jobID + "/chk-1"
	if !e.f.Storage().Exists(chk) {
		t.Fatal("no retained checkpoint to recover from")
	}

	e.delete("app-h1-jm")
	e.delete("app-h1-tm")
	e.waitDown(svc)
	createCluster()
	e.waitUp(svc, 1)
	if jobs := e.f.JobManager(testNS, svc).Jobs(); len(jobs) != 0 {
		t.Fatalf("a recreated JobManager without HA has jobs: %+v", jobs)
	}
	if records := e.f.Timeline().Jobs(testNS + "/app"); len(records) != 1 || records[0].LostAt.IsZero() {
		t.Fatalf("timeline %+v", records)
	}
	// The job id is no duplicate for the new process, and the checkpoint
	// survived on durable storage.
	if status, m := run(`{"jobId":"` + jobID + `","savepointPath":"` + chk + `"}`); status != 200 {
		t.Fatalf("run again: %d %v", status, m)
	}
	e.clk.Step(time.Second)
	_, cp, _ := e.request("GET", "/"+testNS+"/"+svc+"/jobs/"+jobID+"/checkpoints", "")
	// A submission's savepoint path is restored as a savepoint, a retained checkpoint included.
	if at(cp, "latest", "restored", "external_path") != chk || at(cp, "latest", "restored", "is_savepoint") != true {
		t.Fatalf("restored %v", at(cp, "latest", "restored"))
	}

	// Deleted and recreated before the Fleet looks: the pod comes back under
	// the same name (and, on a fake API server, without a UID), yet it is a
	// new process all the same.
	e.delete("app-h1-jm")
	e.create(withProps(pod("app", "h1", RoleJobManager, "app-h1-jm", "flink:1.20", true)))
	eventually(t, "a fresh JobManager", func() bool {
		jm := e.f.JobManager(testNS, svc)
		return jm != nil && len(jm.Jobs()) == 0
	})
}

// TestFleetWithHA: a cluster with HA and no cluster id of its own keeps its
// jobs across JobManager pods and process restarts.
func TestFleetWithHA(t *testing.T) {
	e := newFleetEnv(t)
	svc := "app-h1"
	props := testProps + "\nstate.checkpoints.dir: " + ckpDir + "\nhigh-availability.type: kubernetes"
	withHA := func(p *corev1.Pod) *corev1.Pod {
		p.Spec.Containers[1].Env = []corev1.EnvVar{{Name: flinkPropertiesEnv, Value: props}, {Name: flinkVersionEnv, Value: "1.14.6"}}
		return p
	}
	e.create(withHA(pod("app", "h1", RoleJobManager, "app-h1-jm-a", "flink:1.14", true)))
	e.create(withHA(pod("app", "h1", RoleTaskManager, "app-h1-tm", "flink:1.14", true)))
	e.waitUp(svc, 1)
	status, m, _ := e.request("POST", "/"+testNS+"/"+svc+"/jars/app.jar/run", "")
	if status != 200 {
		t.Fatalf("run: %d %v", status, m)
	}
	jobID := m["jobid"].(string)
	e.clk.Step(11 * time.Second) // chk-1

	// FLINK_VERSION 1.14: a client trigger id is not honoured.
	trigger := strings.Repeat("7e", 16)
	_, m, _ = e.request("POST", "/"+testNS+"/"+svc+"/jobs/"+jobID+"/savepoints", `{"triggerId":"`+trigger+`"}`)
	if m["request-id"] == trigger {
		t.Fatal("FLINK_VERSION not applied")
	}

	e.delete("app-h1-jm-a")
	e.waitDown(svc)
	if r := e.f.Timeline().Jobs(testNS + "/app"); len(r) != 1 || !r[0].LostAt.IsZero() {
		t.Fatalf("timeline after the pod went %+v", r)
	}
	e.create(withHA(pod("app", "h1", RoleJobManager, "app-h1-jm-b", "flink:1.14", true)))
	e.waitUp(svc, 1)
	e.clk.Step(time.Second)
	jm := e.f.JobManager(testNS, svc)
	if jobs := jm.Jobs(); len(jobs) != 1 || jobs[0].ID != jobID || jobs[0].State != "RUNNING" {
		t.Fatalf("jobs in the new pod %+v", jobs)
	}
	_, cp, _ := e.request("GET", "/"+testNS+"/"+svc+"/jobs/"+jobID+"/checkpoints", "")
	if at(cp, "latest", "restored", "external_path") != ckpDir+"/"+jobID+"/chk-1" {
		t.Fatalf("restored %v", at(cp, "latest", "restored"))
	}

	if !e.f.RestartJobManager(testNS, svc) || e.f.RestartJobManager(testNS, "app-none") {
		t.Fatal("RestartJobManager: wrong answer on up or unknown cluster")
	}
	if status, m, _ := e.request("GET", "/"+testNS+"/"+svc+"/jobs", ""); status != 503 || errorText(m) != leaderElectionMessage {
		t.Fatalf("while restarting: %d %v", status, m)
	}
	e.clk.Step(time.Second)
	if status, m, _ := e.request("GET", "/"+testNS+"/"+svc+"/jobs/"+jobID, ""); status != 200 || m["state"] != "INITIALIZING" {
		t.Fatalf("after restarting: %d %v", status, m)
	}
	records := e.f.Timeline().Jobs(testNS + "/app")
	if len(records) != 1 || records[0].JobManager != "app-h1-jm-b" || len(e.f.Timeline().Overlaps(testNS+"/app")) != 0 {
		t.Fatalf("timeline %+v", records)
	}
}

// TestFleetHAConfigMapsHoldTheWayBack: a JobManager with Kubernetes HA writes
// its cluster's HA ConfigMap; one that starts after it was deleted finds no
// HA data and recovers nothing, as Flink does.
func TestFleetHAConfigMapsHoldTheWayBack(t *testing.T) {
	e := newFleetEnv(t)
	svc := "app-h2"
	props := testProps + "\nstate.checkpoints.dir: " + ckpDir + "\nhigh-availability.type: kubernetes\nkubernetes.cluster-id: " + svc
	withHA := func(p *corev1.Pod) *corev1.Pod {
		p.Spec.Containers[1].Env = []corev1.EnvVar{{Name: flinkPropertiesEnv, Value: props}}
		return p
	}
	e.create(withHA(pod("app", "h2", RoleJobManager, "app-h2-jm-a", "flink:1.20", true)))
	e.create(withHA(pod("app", "h2", RoleTaskManager, "app-h2-tm", "flink:1.20", true)))
	e.waitUp(svc, 1)
	ctx := context.Background()
	cm, err := e.kube.CoreV1().ConfigMaps(testNS).Get(ctx, svc+"-cluster-config-map", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("HA ConfigMap: %v", err)
	}
	if cm.Labels["configmap-type"] != "high-availability" || cm.Labels["app"] != svc {
		t.Fatalf("labels %v", cm.Labels)
	}
	if status, m, _ := e.request("POST", "/"+testNS+"/"+svc+"/jars/app.jar/run", ""); status != 200 {
		t.Fatalf("run: %d %v", status, m)
	}

	e.delete("app-h2-jm-a")
	e.waitDown(svc)
	if err := e.kube.CoreV1().ConfigMaps(testNS).Delete(ctx, cm.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.create(withHA(pod("app", "h2", RoleJobManager, "app-h2-jm-b", "flink:1.20", true)))
	e.waitUp(svc, 1)
	e.clk.Step(time.Second)
	if jobs := e.f.JobManager(testNS, svc).Jobs(); len(jobs) != 0 {
		t.Fatalf("recovered without HA data: %+v", jobs)
	}
	if _, err := e.kube.CoreV1().ConfigMaps(testNS).Get(ctx, cm.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("written again by the new JobManager: %v", err)
	}
}
