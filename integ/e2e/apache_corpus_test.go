package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/cli/convert"
)

// The Apache operator's own examples and e2e manifests, converted by kubectl flink convert, apply to
// the local cluster and run: each FlinkApplication and FlinkSessionCluster reaches Running (or
// Suspended, as its spec asks), each FlinkSessionJob runs its job, each FlinkSnapshot is admitted
// and a snapshot of a job in the same file completes.
//
// What the test does beside applying is what a user does on a real cluster, never a change to what
// the converted manifest asks of flinkfsm: each namespace of a file is a namespace of its own,
// annotated as its administrator must annotate it for the Apache examples (their service account
// flink and hostPath volumes, which flinkfsm's pod policy refuses unless the namespace allows them);
// a file's PersistentVolumeClaims are created, each with a volume to bind; a session job's
// FlinkSessionCluster comes from the file that defines it; a session cluster is given the
// TaskManagers its jobs need where convert warned that it must be. The rest stands in for what the
// local cluster lacks: the Flink release the simulated JobManager speaks (FLINK_VERSION, from
// flinkVersion), the session jobs' jars (served on loopback, not from Maven Central), and the
// savepoints a manifest starts from (written to the simulator's storage, as on the user's).
func TestTheApacheOperatorsManifestsRunConverted(t *testing.T) {
	defer stopEnvOnPanic()
	files, err := filepath.Glob("../../pkg/cli/convert/testdata/apache/*.y*ml")
	if err != nil || len(files) == 0 {
		t.Fatalf("the Apache corpus: %v %v", files, err)
	}
	clusters := map[string]map[string]any{}
	for _, f := range files {
		for _, o := range convertedFile(t, f) {
			if o["kind"] == v1beta1.FlinkSessionClusterKind {
				clusters[nameOf(o)] = o
			}
		}
	}
	var applied, ran atomic.Int64
	t.Run("files", func(t *testing.T) {
		for _, f := range files {
			t.Run(strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)), func(t *testing.T) {
				t.Parallel()
				a, r := runConverted(t, convertedFile(t, f), clusters)
				applied.Add(int64(a))
				ran.Add(int64(r))
			})
		}
	})
	t.Logf("%d files: %d flinkfsm objects applied, %d of them ran as asked", len(files), applied.Load(), ran.Load())
}

// convertedFile is a corpus file converted, as objects.
func convertedFile(t *testing.T, file string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := convert.Convert(data)
	if err != nil {
		t.Fatalf("%s: convert: %v", file, err)
	}
	var objects []map[string]any
	for _, doc := range strings.Split(string(out), "---\n") {
		var o map[string]any
		if strings.TrimSpace(doc) != "" && yaml.Unmarshal([]byte(doc), &o) == nil && o != nil {
			objects = append(objects, o)
		}
	}
	return objects
}

func nameOf(o map[string]any) string {
	m, _ := o["metadata"].(map[string]any)
	n, _ := m["name"].(string)
	return n
}

func namespaceOf(o map[string]any) string {
	m, _ := o["metadata"].(map[string]any)
	if n, _ := m["namespace"].(string); n != "" {
		return n
	}
	return "default" // kubectl apply's, for a manifest that names none
}

// as reads an object into a typed one.
func as(t *testing.T, o map[string]any, into any) {
	t.Helper()
	b, err := yaml.Marshal(o)
	if err == nil {
		err = yaml.UnmarshalStrict(b, into)
	}
	if err != nil {
		t.Fatalf("reading converted %v: %v", o["kind"], err)
	}
}

// runConverted applies a file's objects, each namespace of it in a namespace of its own, and waits
// for them to run; it returns how many flinkfsm objects it applied and how many ran as asked.
func runConverted(t *testing.T, objects []map[string]any, clusters map[string]map[string]any) (applied, ran int) {
	groups := map[string][]map[string]any{}
	for _, o := range objects {
		if o["kind"] == "IngressClass" {
			continue // cluster-wide, and the local cluster serves no Ingress
		}
		groups[namespaceOf(o)] = append(groups[namespaceOf(o)], o)
	}
	for _, ns := range slices.Sorted(func(yield func(string) bool) {
		for k := range groups {
			if !yield(k) {
				return
			}
		}
	}) {
		a, r := runGroup(t, groups[ns], clusters)
		applied, ran = applied+a, ran+r
	}
	return applied, ran
}

func runGroup(t *testing.T, objects []map[string]any, clusters map[string]map[string]any) (applied, ran int) {
	s := newScenario(t)
	ns, err := env.Kube.CoreV1().Namespaces().Get(s.ctx, s.ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.Annotations = map[string]string{"flinkfsm.io/allowed-service-accounts": "default,flink", "flinkfsm.io/allow-host-path": "true"}
	if _, err := env.Kube.CoreV1().Namespaces().Update(s.ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var sessionClusters []*v1beta1.FlinkSessionCluster
	var apps []*v1beta1.FlinkApplication
	var jobs []*v1beta1.FlinkSessionJob
	var snapshots []*v1beta1.FlinkSnapshot
	have := map[string]bool{}
	for _, o := range objects {
		switch o["kind"] {
		case v1beta1.FlinkSessionClusterKind:
			c := &v1beta1.FlinkSessionCluster{}
			as(t, o, c)
			sessionClusters = append(sessionClusters, c)
			have[c.Name] = true
		case v1beta1.FlinkApplicationKind:
			a := &v1beta1.FlinkApplication{}
			as(t, o, a)
			apps = append(apps, a)
		case v1beta1.FlinkSessionJobKind:
			j := &v1beta1.FlinkSessionJob{}
			as(t, o, j)
			jobs = append(jobs, j)
		case v1beta1.FlinkSnapshotKind:
			sn := &v1beta1.FlinkSnapshot{}
			as(t, o, sn)
			snapshots = append(snapshots, sn)
		case "PersistentVolumeClaim":
			s.createClaimWithVolume(o)
		}
	}
	for _, j := range jobs {
		if o, ok := clusters[j.Spec.ClusterName]; ok && !have[j.Spec.ClusterName] {
			c := &v1beta1.FlinkSessionCluster{}
			as(t, o, c)
			sessionClusters = append(sessionClusters, c)
			have[c.Name] = true
		}
	}
	api := env.Apps.FlinkV1beta1()
	for _, c := range sessionClusters {
		c.Namespace = s.ns
		onFlink(c.Spec.FlinkVersion, &c.Spec.ClusterSpec)
		fitJobs(c, jobs)
		if err := admitted(func() error {
			_, err := api.FlinkSessionClusters(s.ns).Create(s.ctx, c, metav1.CreateOptions{})
			return err
		}); err != nil {
			t.Fatalf("applying FlinkSessionCluster %s: %v", c.Name, err)
		}
		applied++
	}
	for _, a := range apps {
		a.Namespace = s.ns
		onFlink(a.Spec.FlinkVersion, &a.Spec.ClusterSpec)
		if p := a.Spec.SavepointPath; p != "" {
			env.Fleet.Storage().PutBack(flinksim.Snapshot{Path: p, Savepoint: true, CheckpointID: 1, JobID: strings.Repeat("0", 32), CreatedAt: time.Now()})
		}
		if err := admitted(func() error {
			_, err := api.FlinkApplications(s.ns).Create(s.ctx, a, metav1.CreateOptions{})
			return err
		}); err != nil {
			t.Fatalf("applying FlinkApplication %s: %v", a.Name, err)
		}
		s.apps = append(s.apps, a.Name)
		if a.Spec.DeploymentMode == v1beta1.DeploymentModeBlueGreen {
			if s.blueGreen == nil {
				s.blueGreen = map[string]bool{}
			}
			s.blueGreen[a.Name] = true
		}
		applied++
	}
	jar := s.jarServer()
	for _, j := range jobs {
		j.Namespace = s.ns
		if strings.HasPrefix(j.Spec.Job.JarURI, "https://") || !strings.Contains(j.Spec.Job.JarURI, "://") {
			j.Spec.Job.JarURI, j.Spec.Job.JarSHA256 = jar, ""
		}
		if err := admitted(func() error {
			_, err := api.FlinkSessionJobs(s.ns).Create(s.ctx, j, metav1.CreateOptions{})
			return err
		}); err != nil {
			t.Fatalf("applying FlinkSessionJob %s: %v", j.Name, err)
		}
		applied++
	}
	for _, sn := range snapshots {
		sn.Namespace = s.ns
		if _, err := api.FlinkSnapshots(s.ns).Create(s.ctx, sn, metav1.CreateOptions{}); err != nil {
			t.Fatalf("applying FlinkSnapshot %s: %v", sn.Name, err)
		}
		applied++
	}

	for _, c := range sessionClusters {
		s.eventually("FlinkSessionCluster "+c.Name+" running", func() (bool, string) {
			got, err := api.FlinkSessionClusters(s.ns).Get(s.ctx, c.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return got.Status.Phase == v1beta1.SessionClusterRunning, fmt.Sprintf("phase %s: %s", got.Status.Phase, got.Status.Reason)
		})
		ran++
	}
	owners := map[string]bool{}
	for _, a := range apps {
		if a.Spec.State == v1beta1.JobStateSuspended {
			s.waitPhase(a.Name, v1beta1.PhaseSuspended)
		} else {
			s.waitRunning(a.Name, "")
			owners[a.Name] = true
		}
		ran++
	}
	for _, j := range jobs {
		s.sessionJobRuns(j.Name, "")
		ran++
	}
	for _, sn := range snapshots {
		if owners[sn.Spec.Owner.Name] && sn.Spec.Owner.Kind == v1beta1.FlinkApplicationKind {
			s.eventually("FlinkSnapshot "+sn.Name+" completed", func() (bool, string) {
				got, err := api.FlinkSnapshots(s.ns).Get(s.ctx, sn.Name, metav1.GetOptions{})
				if err != nil {
					return false, err.Error()
				}
				return got.Status.State == v1beta1.StateCompleted, fmt.Sprintf("%s: %s", got.Status.State, got.Status.Error)
			})
		}
		ran++
	}
	return applied, ran
}

// fitJobs gives a session cluster converted without replicas (convert warns of it) the TaskManagers
// whose slots fit its jobs, as the warning asks the user to.
func fitJobs(c *v1beta1.FlinkSessionCluster, jobs []*v1beta1.FlinkSessionJob) {
	if c.Spec.TaskManagerConfig.Replicas != nil {
		return
	}
	slots := int32(1)
	if n := c.Spec.TaskManagerConfig.TaskSlots; n != nil {
		slots = *n
	}
	need := int32(0)
	for _, j := range jobs {
		if j.Spec.ClusterName == c.Name {
			p := int32(1)
			if j.Spec.Job.Parallelism != nil {
				p = *j.Spec.Job.Parallelism
			}
			need += p
		}
	}
	replicas := max(1, (need+slots-1)/slots)
	c.Spec.TaskManagerConfig.Replicas = &replicas
}

// createClaimWithVolume creates a file's PersistentVolumeClaim and a volume bound to it: the local
// cluster has no provisioner.
func (s *scenario) createClaimWithVolume(o map[string]any) {
	s.t.Helper()
	claim := &corev1.PersistentVolumeClaim{}
	as(s.t, o, claim)
	claim.Namespace = s.ns
	empty := ""
	claim.Spec.StorageClassName = &empty
	created, err := env.Kube.CoreV1().PersistentVolumeClaims(s.ns).Create(s.ctx, claim, metav1.CreateOptions{})
	if err != nil {
		s.t.Fatalf("creating PersistentVolumeClaim %s: %v", claim.Name, err)
	}
	size := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	if size.IsZero() {
		size = resource.MustParse("1Gi")
	}
	mode := corev1.PersistentVolumeFilesystem
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: s.ns + "-" + claim.Name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:            claim.Spec.AccessModes,
			VolumeMode:             &mode,
			StorageClassName:       "",
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + s.ns + "/" + claim.Name}},
			ClaimRef:               &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: s.ns, Name: claim.Name, UID: created.UID},
		},
	}
	if _, err := env.Kube.CoreV1().PersistentVolumes().Create(s.ctx, pv, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("creating a volume for %s: %v", claim.Name, err)
	}
	s.t.Cleanup(func() { _ = env.Kube.CoreV1().PersistentVolumes().Delete(s.ctx, pv.Name, metav1.DeleteOptions{}) })
}

// admitted creates an object, waiting out the admission policy's view of the namespace: the API
// server reads namespaces for its admission policies from a cache, which may not yet hold the
// annotations just written.
func admitted(create func() error) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := create()
		if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "flinkfsm.io/allow") || time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}
