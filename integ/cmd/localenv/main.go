// Command localenv keeps a local flinkfsm environment running for `make cluster-up`: a local
// Kubernetes, the Flink simulator and the operator. It writes <dir>/kubeconfig and <dir>/ready once
// everything is up, and tears everything down on SIGTERM or SIGINT.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/flinkfsm/flinkfsm/integ/localenv"
)

func main() {
	dir := flag.String("dir", ".local", "directory for state, logs and the kubeconfig")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "localenv:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
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
	env, err := localenv.Start(ctx, localenv.Options{Dir: filepath.Join(dir, "env"), Log: os.Stdout})
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
