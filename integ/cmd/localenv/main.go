// Command localenv keeps a local flinkfsm environment running for `make cluster-up`: a local
// Kubernetes, the Flink simulator (or, with -flink real, real Flink JobManagers and TaskManagers of
// the cached releases) and the operator. It writes <dir>/kubeconfig and <dir>/ready once everything
// is up, and tears everything down on SIGTERM or SIGINT.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"k8s.io/client-go/kubernetes"

	"github.com/flinkfsm/flinkfsm/integ/localenv"
	"github.com/flinkfsm/flinkfsm/integ/realflink"
)

// realImagePrefix names the images of -flink real: realImagePrefix + "2.3" runs Flink 2.3 with the
// real test job (integ/flinkjob) in its upload directory as realJobJar.
const (
	realImagePrefix = "flinkfsm/test-job:flink-"
	realJobJar      = "flinkfsm-test-job.jar"
)

// realImages are the images of the cached releases, each holding the test job built against it.
func realImages(releases []string) (map[string]realflink.Image, error) {
	images := map[string]realflink.Image{}
	for _, name := range releases {
		d, err := realflink.FindDist(name)
		if err != nil {
			return nil, fmt.Errorf("Flink %s: %w (hack/flink-dist.sh %s puts it in the cache)", name, err, name)
		}
		jar, err := d.TestJobJar()
		if err != nil {
			return nil, fmt.Errorf("Flink %s: %w (hack/flinkjob.sh %s builds it)", name, err, name)
		}
		images[realImagePrefix+name] = realflink.Image{Dist: d, Config: map[string]string{"web.upload.dir": "/opt/flink"},
			Files: map[string]string{"/opt/flink/flink-web-upload/" + realJobJar: jar}}
	}
	return images, nil
}

func main() {
	dir := flag.String("dir", ".local", "directory for state, logs and the kubeconfig")
	flinkKind := flag.String("flink", "sim", "sim: the Flink simulator; real: real Flink of -flink-releases (hack/flink-dist.sh and hack/flinkjob.sh put them in the cache)")
	releases := flag.String("flink-releases", "2.3", "with -flink real, the releases pods may run, each as image "+realImagePrefix+"<version>")
	flag.Parse()
	if err := run(*dir, *flinkKind, strings.Fields(strings.ReplaceAll(*releases, ",", " "))); err != nil {
		fmt.Fprintln(os.Stderr, "localenv:", err)
		os.Exit(1)
	}
}

func run(dir, flinkKind string, releases []string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	_ = os.Remove(filepath.Join(dir, "ready"))
	if err := os.RemoveAll(filepath.Join(dir, "env")); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	opts := localenv.Options{Dir: filepath.Join(dir, "env"), Log: os.Stdout}
	var fleet *realflink.Fleet
	switch flinkKind {
	case "sim":
	case "real":
		images, err := realImages(releases)
		if err != nil {
			return err
		}
		// Real JVMs take tens of seconds to start and rescale: the operator's own deadlines.
		opts.OperatorConfig = map[string]string{"readinessTimeout": "180s", "cancelTimeout": "120s", "savepointTimeout": "120s",
			"clusterStartTimeout": "180s"}
		opts.Flink = func(kube kubernetes.Interface, kubeconfig string) localenv.FlinkFleet {
			fleet = realflink.NewFleet(kube, realflink.FleetOptions{Images: images, Kubeconfig: kubeconfig,
				Dir: filepath.Join(dir, "env", "flink"), Logf: func(f string, a ...any) { fmt.Printf("[flink] "+f+"\n", a...) }})
			return fleet
		}
	default:
		return fmt.Errorf("-flink %q: want sim or real", flinkKind)
	}
	env, err := localenv.Start(ctx, opts)
	if fleet != nil {
		defer fleet.Stop()
	}
	if err != nil {
		return err
	}
	defer env.Stop()
	kubeconfig, err := os.ReadFile(env.Cluster.KubeconfigPath)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), kubeconfig, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "ready"), []byte(env.FlinkURL+"\n"), 0o644); err != nil {
		return err
	}
	fmt.Printf("[localenv] ready: export KUBECONFIG=%s\n", filepath.Join(dir, "kubeconfig"))
	<-ctx.Done()
	fmt.Println("[localenv] stopping")
	return nil
}
