package realflink

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/flinkfsm/flinkfsm/integ/localcluster"
	"github.com/flinkfsm/flinkfsm/integ/localenv"
	"github.com/flinkfsm/flinkfsm/integ/testkit"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// Lyft's test image bundles its jar in Flink's jar directory (web.upload.dir/flink-web-upload); the
// fleet's images of the same name put the test job there, one image per release.
const (
	lyftJar      = "operator-test-app-1.0.0-SNAPSHOT.jar"
	lyftJarDir   = "/opt/flink/flink-web-upload"
	testJobClass = "flinkfsm.testjob.TestJob"
)

// realRelease is one release the operator scenarios run on.
type realRelease struct {
	name  string
	dist  Dist
	image string
}

// shared is the one local cluster, operator and real-Flink fleet the operator scenarios share (each
// in namespaces of its own): started by the first scenario that runs, stopped by TestMain.
var shared struct {
	once     sync.Once
	env      *localenv.Env
	fleet    *Fleet
	releases []realRelease
	// dir holds the environment's and Flink's logs; kept when a test failed.
	dir string
	// skip or fail say why no scenario can run.
	skip, fail string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.env != nil {
		shared.env.Stop()
	}
	if shared.fleet != nil {
		shared.fleet.Stop()
	}
	if shared.dir != "" {
		if code != 0 {
			fmt.Fprintf(os.Stderr, "the environment's and Flink's logs are kept in %s\n", shared.dir)
		} else {
			_ = os.RemoveAll(shared.dir)
		}
	}
	os.Exit(code)
}

// operatorOnRealFlink is the local cluster and the operator with a real-Flink fleet that runs every
// release RealFlinkEnv names, started once for all the scenarios; it returns them in that order.
func operatorOnRealFlink(t *testing.T) (*localenv.Env, *Fleet, []realRelease) {
	shared.once.Do(startOperatorOnRealFlink)
	switch {
	case shared.skip != "":
		t.Skip(shared.skip)
	case shared.fail != "":
		t.Fatal(shared.fail)
	}
	return shared.env, shared.fleet, shared.releases
}

func startOperatorOnRealFlink() {
	names := strings.FieldsFunc(os.Getenv(RealFlinkEnv), func(r rune) bool { return r == ',' || r == ' ' })
	if len(names) == 0 {
		shared.skip = fmt.Sprintf("real Flink is opt-in: %s=\"2.3 1.20\" (make test-flink)", RealFlinkEnv)
		return
	}
	if _, err := localcluster.LocateBinaries(); err != nil {
		shared.skip = fmt.Sprintf("the local cluster's binaries are not built: %v", err)
		return
	}
	images := map[string]Image{}
	for _, name := range names {
		d, err := FindDist(name)
		if err != nil {
			fmt.Fprintf(os.Stderr, "skipping Flink %s: %v\n", name, err)
			continue
		}
		jar, err := d.TestJobJar()
		if err != nil {
			fmt.Fprintf(os.Stderr, "skipping Flink %s: %v\n", name, err)
			continue
		}
		image := "operator-test-app:flink-" + d.Version
		images[image] = Image{Dist: d,
			Config: map[string]string{"web.upload.dir": "/opt/flink"},
			Files:  map[string]string{lyftJarDir + "/" + lyftJar: jar}}
		shared.releases = append(shared.releases, realRelease{name: name, dist: d, image: image})
	}
	if len(shared.releases) == 0 {
		shared.skip = "no release of " + RealFlinkEnv + " is cached"
		return
	}
	dir, err := os.MkdirTemp("", "flinkfsm-realfleet-")
	if err != nil {
		shared.fail = err.Error()
		return
	}
	shared.dir = dir
	logFile, err := os.Create(filepath.Join(dir, "localenv.log"))
	if err != nil {
		shared.fail = err.Error()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	began := time.Now()
	env, err := localenv.Start(ctx, localenv.Options{Dir: filepath.Join(dir, "env"), Log: logFile,
		// Real JVMs start and rescale in tens of seconds: the deadlines are a production operator's.
		OperatorConfig: map[string]string{"jobStabilizationPeriod": "2s", "savepointTimeout": "120s", "clusterStartTimeout": "180s",
			"readinessTimeout": "180s", "cancelTimeout": "120s"},
		Flink: func(kube kubernetes.Interface, kubeconfig string) localenv.FlinkFleet {
			shared.fleet = NewFleet(kube, FleetOptions{Images: images, Kubeconfig: kubeconfig, Dir: filepath.Join(dir, "flink"),
				Logf: func(f string, a ...any) { fmt.Fprintf(logFile, f+"\n", a...) }})
			return shared.fleet
		}})
	if err != nil {
		shared.fail = fmt.Sprintf("starting the local environment: %v (log %s)", err, logFile.Name())
		return
	}
	shared.env = env
	fmt.Fprintf(os.Stderr, "local cluster, operator and real-Flink fleet up in %s\n", time.Since(began).Round(time.Millisecond))
}

// The operator deploys Lyft's manifest on real Flink, upgrades it with a savepoint, and deletes it:
// the new job goes on with exactly the state the savepoint held, as the test job's output shows.
func TestALyftApplicationIsDeployedUpgradedAndDeletedOnRealFlink(t *testing.T) {
	env, fleet, releases := operatorOnRealFlink(t)
	for _, r := range releases {
		t.Run(r.name, func(t *testing.T) { lyftSavepointUpgrade(t, env, fleet, r) })
	}
}

func lyftSavepointUpgrade(t *testing.T, env *localenv.Env, fleet *Fleet, r realRelease) {
	ctx := context.Background()
	began := time.Now()
	ns := realNamespace(t, env)
	out := t.TempDir()
	app := lyftManifest(t, ns, r, out)
	apps := env.Apps.FlinkV1beta1().FlinkApplications(ns)
	eventually(t, 30*time.Second, "creating "+app.Name, func() (bool, error) {
		_, err := apps.Create(ctx, app, metav1.CreateOptions{})
		return err == nil, err // the namespace's hostPath allowance applies a moment after it exists
	})

	running := awaitApp(t, env, ns, app.Name, "Running", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.State == v1beta1.JobRunning && a.Status.JobStatus.JobID != ""
	})
	deployed := time.Since(began)
	first, hash := running.Status.JobStatus.JobID, running.Status.DeployHash
	url := fleet.JobManagerURL(ns, app.Name+"-"+hash)
	api := client.New(client.DefaultConfig(), nil)
	job, err := api.GetJob(ctx, url, first)
	if err != nil || job.State != client.JobRunning {
		t.Fatalf("Flink's job %s: %+v, %v; want it RUNNING", first, job, err)
	}
	for _, v := range job.Vertices {
		if v.Name != "" && strings.Contains(v.Name, "counter") && v.Parallelism != 2 {
			t.Errorf("vertex %s runs with parallelism %d, want 2", v.Name, v.Parallelism)
		}
	}
	eventually(t, 2*time.Minute, "two checkpoints of job "+first, func() (bool, error) {
		st, err := api.GetCheckpoints(ctx, url, first)
		return err == nil && st.Counts.Completed >= 2, err
	})

	// The savepoint upgrade: a new parallelism.
	upgradeBegan := time.Now()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		a, err := apps.Get(ctx, app.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		a.Spec.Parallelism = 3
		_, err = apps.Update(ctx, a, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	upgraded := awaitApp(t, env, ns, app.Name, "Running on a new cluster", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.DeployHash != hash && a.Status.JobStatus.State == v1beta1.JobRunning &&
			a.Status.JobStatus.JobID != "" && a.Status.JobStatus.JobID != first
	})
	upgradeTook := time.Since(upgradeBegan)
	second, newHash := upgraded.Status.JobStatus.JobID, upgraded.Status.DeployHash
	url = fleet.JobManagerURL(ns, app.Name+"-"+newHash)
	restored, later := awaitCheckpointAfterRestore(t, api, url, second)
	// Flink says is_savepoint for any path a job was submitted with: the path tells which it was.
	if !isSavepointPath(restored.ExternalPath) {
		t.Errorf("job %s restored %+v, want a savepoint", second, restored)
	}
	if p := upgraded.Status.JobStatus.RestorePath; p != "" && p != restored.ExternalPath {
		t.Errorf("the status says job %s restored %s; Flink says %s", second, p, restored.ExternalPath)
	}
	before, err := ReadJobOutput(out, first)
	if err != nil {
		t.Fatal(err)
	}
	resume, ok := before.ResumePosition(restored.ID)
	if !ok {
		t.Fatalf("job %s wrote no position for savepoint %d (it wrote %v)", first, restored.ID, before.Highest)
	}
	after, err := ReadJobOutput(out, second)
	if err != nil {
		t.Fatal(err)
	}
	upTo, _ := after.ResumePosition(later.ID)
	check(t, before.CheckCounts(testKeys), before.CheckExactlyFrom(0, resume), after.CheckCounts(testKeys), after.CheckExactlyFrom(resume, upTo))
	t.Logf("Flink %s: job %s counted 0..%d; savepoint %d (%s) held 0..%d; job %s went on at %d with parallelism 3 (checkpoint %d held 0..%d)",
		r.dist.Version, first, before.HighestCounted(), restored.ID, restored.ExternalPath, resume-1, second, resume, later.ID, upTo-1)

	// Delete: a final savepoint, then every process gone.
	deleteBegan := time.Now()
	if err := apps.Delete(ctx, app.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var final string
	eventually(t, 3*time.Minute, app.Name+" deleted", func() (bool, error) {
		a, err := apps.Get(ctx, app.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err == nil && a.Status.FinalSavepointPath != "" {
			final = a.Status.FinalSavepointPath
		}
		if err == nil {
			err = fmt.Errorf("%s", testkit.Describe(a))
		}
		return false, err
	})
	// The status holds the final savepoint only for the moment before the object goes, so Flink's
	// side is what is checked: a second savepoint, the final one, beside the upgrade's.
	dir := filepath.Dir(strings.TrimPrefix(restored.ExternalPath, "file:"))
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The directory is the node's, shared by every scenario: Flink names a savepoint after the first
	// six characters of its job's id, which the operator's job ids of one application share.
	var savepoints []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "savepoint-"+first[:6]+"-") {
			savepoints = append(savepoints, e.Name())
		}
	}
	if len(savepoints) != 2 {
		t.Errorf("the savepoint directory holds %v, want the upgrade's and the final savepoint", savepoints)
	}
	if final != "" && !slices.Contains(savepoints, filepath.Base(strings.TrimPrefix(final, "file:"))) {
		t.Errorf("the status's final savepoint %s is not among %v", final, savepoints)
	}
	eventually(t, time.Minute, "every process of "+app.Name+" ended", func() (bool, error) {
		return fleet.processesOf(ns, app.Name) == 0, nil
	})
	t.Logf("Flink %s scenario: %s (deploy %s, upgrade %s, delete %s); %s", r.dist.Version, time.Since(began).Round(time.Second),
		deployed.Round(time.Second), upgradeTook.Round(time.Second), time.Since(deleteBegan).Round(time.Second), fleet.Memory())
}

// lyftManifest is Lyft's test manifest as it is, but for what names the test job and this run: the
// release's image, its flinkVersion (a release newer than the CRD accepts is declared as the newest
// it does), the test job's entry class and arguments, and a checkpoint interval (Lyft's test jar sets
// one in its code).
func lyftManifest(t *testing.T, namespace string, r realRelease, out string) *v1beta1.FlinkApplication {
	raw, err := os.ReadFile("../lyftcompat/testdata/test_app.yaml")
	if err != nil {
		t.Fatal(err)
	}
	app := &v1beta1.FlinkApplication{}
	if err := yaml.UnmarshalStrict(raw, app); err != nil {
		t.Fatal(err)
	}
	app.Namespace = namespace
	app.Spec.Image = r.image
	major, minor := majorMinor(r.dist.Version)
	version := fmt.Sprintf("%d.%d", major, minor)
	if !slices.Contains(v1beta1.SupportedFlinkVersions, version) {
		version = v1beta1.SupportedFlinkVersions[len(v1beta1.SupportedFlinkVersions)-1]
	}
	app.Spec.FlinkVersion = version
	app.Spec.EntryClass = testJobClass
	app.Spec.ProgramArgs = fmt.Sprintf("--out %s --keys %d --rate 200", out, testKeys)
	app.Spec.FlinkConfig["execution.checkpointing.interval"] = "1s"
	return app
}

func majorMinor(v string) (int, int) {
	var ma, mi int
	fmt.Sscanf(v, "%d.%d", &ma, &mi)
	return ma, mi
}

// awaitApp waits until done holds for the application; DeployFailed, unless done, ends the test.
func awaitApp(t *testing.T, env *localenv.Env, ns, name, what string, done func(*v1beta1.FlinkApplication) bool) *v1beta1.FlinkApplication {
	t.Helper()
	var got *v1beta1.FlinkApplication
	eventually(t, 4*time.Minute, name+" "+what, func() (bool, error) {
		a, err := env.Apps.FlinkV1beta1().FlinkApplications(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = a
		if done(a) {
			return true, nil
		}
		if a.Status.Phase == v1beta1.PhaseDeployFailed {
			t.Fatalf("%s failed to deploy: %s", name, testkit.Describe(a))
		}
		return false, fmt.Errorf("%s", testkit.Describe(a))
	})
	return got
}
