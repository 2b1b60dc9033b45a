package cli

import (
	"errors"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flinkfsm/flinkfsm/pkg/cli/convert"
	"github.com/flinkfsm/flinkfsm/pkg/cli/migrate"
)

// apacheClients builds the client that reads and patches the Apache operator's objects, which
// flinkfsm's typed clientset does not know; tests replace it with a fake.
var apacheClients = func(kubeconfig, context string) (dynamic.Interface, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
	rest, err := cfg.ClientConfig()
	if err != nil {
		return nil, err
	}
	return dynamic.NewForConfig(rest)
}

// migratePoll is how often migrate reads the Apache object while its operator stops the job.
const migratePoll = 2 * time.Second

func newMigrateCommand(o *options) *cobra.Command {
	var req migrate.Request
	cmd := &cobra.Command{
		Use:   "migrate flinkdeployment/NAME | flinksessionjob/NAME",
		Short: "Move a job run by the Apache Flink operator (flink.apache.org) to flinkfsm, starting from the savepoint it stops with",
		Long: "Move a running job of the Apache Flink Kubernetes operator to flinkfsm with its state:\n" +
			"  1. set spec.job.state suspended and spec.job.upgradeMode savepoint on the Apache object, so that its\n" +
			"     operator stops the job with a savepoint (the job writes nothing after it);\n" +
			"  2. wait until that operator has recorded the stop (status.reconciliationStatus.lastReconciledSpec,\n" +
			"     status.jobStatus.state) and its savepoint (status.jobStatus.upgradeSavepointPath with\n" +
			"     savepointInfo.lastSavepoint, or an UPGRADE FlinkStateSnapshot), and prove it newer than anything\n" +
			"     recorded before the request;\n" +
			"  3. create the converted FlinkApplication (from an application-mode FlinkDeployment) or FlinkSessionJob,\n" +
			"     of the same name, starting from exactly that savepoint;\n" +
			"  4. leave the Apache object suspended, never deleted: delete it yourself when you no longer need it.\n" +
			"Each step is recorded on the Apache object (annotation " + migrate.RecordAnnotation + ") before it acts: after an\n" +
			"interruption, run the same command again to continue; it never asks for a second savepoint or creates a\n" +
			"second object. A job whose state cannot be proven is refused, and nothing is created. A job the Apache\n" +
			"operator suspended with a savepoint already moves from that savepoint if its status proves it the newest\n" +
			"state. A job with upgradeMode stateless is refused unless --allow-stateless: it is then suspended without\n" +
			"a savepoint and the new job starts empty. --dry-run checks all this and prints the plan.\n\n" +
			"Exit codes: 0 migrated (or already); 1 the Apache operator did not stop the job within --timeout (run\n" +
			"again to keep waiting); 2 the savepoint failed or cannot be proven the newest state; 3 refused (nothing\n" +
			"more was changed), bad usage, or the API server could not be read.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, name, err := migrate.ParseObject(args[0])
			if err != nil {
				return exitWith(ExitError, "%v", err)
			}
			fsm, ns, err := o.connect()
			if err != nil {
				return err
			}
			apache, err := apacheClients(o.kubeconfig, o.context)
			if err != nil {
				return exitWith(ExitError, "connecting to the cluster: %v", err)
			}
			req.Kind, req.Namespace, req.Name = kind, ns, name
			m := &migrate.Migrator{Apache: apache, Flinkfsm: fsm, Convert: convertWithWarnings, Clock: migrate.SystemClock{},
				Out: cmd.OutOrStdout(), Poll: migratePoll}
			return migrateExit(m.Run(cmd.Context(), req))
		},
	}
	f := cmd.Flags()
	f.DurationVar(&req.Timeout, "timeout", 10*time.Minute, "how long to wait for the Apache operator to stop the job and record its savepoint")
	f.BoolVar(&req.DryRun, "dry-run", false, "print what would be done, and change nothing")
	f.BoolVar(&req.AllowStateless, "allow-stateless", false,
		"move a job whose upgradeMode is stateless, accepting that the new job starts without its state")
	return cmd
}

// migrateExit gives a migration's end the exit code the other commands use for its kind.
func migrateExit(err error) error {
	var e *migrate.Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Reason {
	case migrate.TimedOut:
		return &exitError{ExitTimeout, err}
	case migrate.Failed:
		return &exitError{ExitFailed, err}
	}
	return &exitError{ExitError, err}
}

// convertWithWarnings is convert.Convert with its warnings as text.
func convertWithWarnings(in []byte) ([]byte, []string, error) {
	out, report, err := convert.Convert(in)
	warnings := make([]string, 0, len(report.Warnings))
	for _, w := range report.Warnings {
		warnings = append(warnings, w.String())
	}
	return out, warnings, err
}
