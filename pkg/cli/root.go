// Package cli is `kubectl flink`: reads and spec patches of FlinkApplications and FlinkSessionJobs,
// and the FlinkSnapshots that ask for their savepoints, that users would otherwise write by hand. It
// has no API of its own.
package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
	"github.com/flinkfsm/flinkfsm/pkg/printable"
)

// Exit codes, for CI pipelines.
const (
	// ExitOK: done, or the awaited state was reached.
	ExitOK = 0
	// ExitTimeout: `wait` gave up before the state was reached.
	ExitTimeout = 1
	// ExitFailed: `wait` saw the object reach a state it cannot leave for the awaited one on its own
	// (DeployFailed while waiting for Running, say).
	ExitFailed = 2
	// ExitError: bad usage, or the object or the API server could not be read.
	ExitError = 3
)

// exitError carries the exit code a command ends with.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func exitWith(code int, format string, args ...interface{}) error {
	return &exitError{code, fmt.Errorf(format, args...)}
}

// Clients builds the API client from the command line's connection flags.
type Clients func(kubeconfig, context string) (versioned.Interface, string, error)

// kubeClients is the real Clients: kubectl's kubeconfig rules, and its namespace.
func kubeClients(kubeconfig, context string) (versioned.Interface, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
	rest, err := cfg.ClientConfig()
	if err != nil {
		return nil, "", err
	}
	ns, _, err := cfg.Namespace()
	if err != nil {
		return nil, "", err
	}
	c, err := versioned.NewForConfig(rest)
	return c, ns, err
}

// Main runs the plugin and returns its exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	return Run(args, stdout, stderr, kubeClients)
}

// Run runs the plugin with the given way to reach the API server.
func Run(args []string, stdout, stderr io.Writer, clients Clients) int {
	root := NewCommand(clients)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	var e *exitError
	if errors.As(err, &e) {
		fmt.Fprintln(stderr, "error:", printable.Text(e.err.Error()))
		return e.code
	}
	fmt.Fprintln(stderr, "error:", printable.Text(err.Error()))
	return ExitError
}

// options are the connection flags every command shares.
type options struct {
	kubeconfig, context, namespace string
	clients                        Clients
}

// connect returns the client and the namespace to work in.
func (o *options) connect() (versioned.Interface, string, error) {
	c, ns, err := o.clients(o.kubeconfig, o.context)
	if err != nil {
		return nil, "", exitWith(ExitError, "connecting to the cluster: %v", err)
	}
	if o.namespace != "" {
		ns = o.namespace
	}
	if ns == "" {
		ns = "default"
	}
	return c, ns, nil
}

// NewCommand is the `kubectl flink` command tree.
func NewCommand(clients Clients) *cobra.Command {
	o := &options{clients: clients}
	root := &cobra.Command{
		Use:   "kubectl-flink",
		Short: "Operate Flink jobs run by flinkfsm: status, wait, savepoint, snapshots, suspend, resume, restart, rollback, promote, abort",
		Long: "Operate FlinkApplications and FlinkSessionJobs. APP names a FlinkApplication; sessionjob/NAME (or fsj/NAME)\n" +
			"a FlinkSessionJob. Every command is a read, a patch of the object's spec, or (savepoint) the creation of\n" +
			"a FlinkSnapshot: no API of its own.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	f := root.PersistentFlags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: kubectl's rules)")
	f.StringVar(&o.context, "context", "", "kubeconfig context")
	f.StringVarP(&o.namespace, "namespace", "n", "", "namespace (default: the context's)")
	root.AddCommand(newStatusCommand(o), newHistoryCommand(o), newWaitCommand(o), newSavepointCommand(o), newSnapshotsCommand(o), newConvertCommand())
	root.AddCommand(patchCommands(o)...)
	root.AddCommand(newMigrateCommand(o))
	root.AddCommand(&cobra.Command{
		Use: "version", Short: "Print the plugin's version", Args: cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), Version) },
	})
	return root
}

// Version is the plugin's release, set by the release build (-ldflags -X); "dev" otherwise.
var Version = "dev"
