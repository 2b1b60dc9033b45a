package localenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// ReplicaOptions starts an operator process the way an installation would run it, rather than with
// the environment's own config: tests of the Helm chart run the operator with the chart's config
// and as the chart's service account.
type ReplicaOptions struct {
	// ConfigFile is the operator's config file, used as it is.
	ConfigFile string
	// Impersonate, when set, is the user every request of the operator is made as, such as
	// "system:serviceaccount:flinkfsm-system:flinkfsm": RBAC then decides what it may do, as in a pod
	// running under that service account. The cluster's admin credentials only authenticate.
	Impersonate string
	// Env is added to the process's environment, such as "POD_NAMESPACE=flinkfsm-system".
	Env []string
}

// StartReplicaWith starts an operator process with the given config file, identity and
// environment. It logs to ReplicaLog(name).
func (e *Env) StartReplicaWith(name string, opts ReplicaOptions) (*Replica, error) {
	if opts.ConfigFile == "" {
		return nil, fmt.Errorf("replica %s: no config file", name)
	}
	kubeconfig := e.Cluster.KubeconfigPath
	if opts.Impersonate != "" {
		cfg, err := clientcmd.LoadFromFile(e.Cluster.KubeconfigPath)
		if err != nil {
			return nil, err
		}
		for _, auth := range cfg.AuthInfos {
			auth.Impersonate = opts.Impersonate
		}
		kubeconfig = filepath.Join(e.Dir, "kubeconfig-"+name)
		if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
			return nil, err
		}
	}
	logFile, err := os.OpenFile(e.ReplicaLog(name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(e.binary, "run", "--kubeconfig", kubeconfig, "--config", opts.ConfigFile)
	cmd.Env = append(os.Environ(), opts.Env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	r := &Replica{Name: name, cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); logFile.Close(); close(r.exited) }()
	e.logf("operator replica %s started (pid %d, config %s, as %q)", name, cmd.Process.Pid, opts.ConfigFile, opts.Impersonate)
	return r, nil
}

// ReplicaLog is where a replica's output goes.
func (e *Env) ReplicaLog(name string) string {
	return filepath.Join(e.Dir, "logs", "operator-"+name+".log")
}

// Terminate sends the replica SIGTERM, as the kubelet does to a pod being replaced, and waits for
// it to exit; past timeout it is killed and Terminate says so.
func (r *Replica) Terminate(timeout time.Duration) error {
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-r.exited:
		return nil
	case <-time.After(timeout):
		r.Kill()
		return fmt.Errorf("replica %s did not exit within %s of SIGTERM; killed", r.Name, timeout)
	}
}
