package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/printable"
)

// savepointFlags are what `savepoint` is asked for on its command line.
type savepointFlags struct {
	checkpoint, disposeOnDelete, keep, noWait, nonce bool
	format, name                                     string
	timeout                                          time.Duration
}

// snapshotOnlyFlags need a FlinkSnapshot: the nonce an older operator honours carries none of them.
var snapshotOnlyFlags = []string{"checkpoint", "format", "dispose-on-delete", "keep", "name", "no-wait"}

func newSavepointCommand(o *options) *cobra.Command {
	var f savepointFlags
	cmd := &cobra.Command{
		Use:   "savepoint APP",
		Short: "Take a savepoint (or --checkpoint) of the running job, which keeps running, as a FlinkSnapshot, and print its path",
		Long: "Take a savepoint of the running job of APP, which keeps running: create a FlinkSnapshot of it, named\n" +
			"<APP>-manual-<random> (or --name), follow it until the operator says how it ended, and print its path\n" +
			"on stdout. Exit codes: 0 completed; 1 no answer within --timeout (the FlinkSnapshot stays and the\n" +
			"operator goes on: follow it with kubectl get fsnap NAME); 2 the snapshot failed, or its FlinkSnapshot\n" +
			"was deleted; 3 bad usage, or the FlinkSnapshot could not be created or read.\n\n" +
			"--nonce sets spec.savepointTriggerNonce (spec.job.savepointTriggerNonce of a session job) instead and\n" +
			"follows the object's status.ledger, as the plugin did before FlinkSnapshots: use it with an operator\n" +
			"older than them, whose cluster has no FlinkSnapshot resource. It takes a savepoint only, and none of\n" +
			"the FlinkSnapshot flags apply.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := f.validate(cmd)
			if err != nil {
				return err
			}
			t, err := o.target(args[0])
			if err != nil {
				return err
			}
			if f.nonce {
				return nonceSavepoint(cmd, t, f.timeout)
			}
			// A FlinkSnapshot of an owner that is not there would wait for a savepoint no one takes.
			if _, err := t.get(cmd.Context()); err != nil {
				return err
			}
			s, err := t.createSnapshot(cmd.Context(), f.name, spec)
			if err != nil {
				return err
			}
			what := fmt.Sprintf("FlinkSnapshot %s/%s", s.Namespace, printable.Text(s.Name))
			if f.noWait {
				fmt.Fprintf(cmd.ErrOrStderr(), "created %s (%s of %s)\n", what, spec.Type, t)
				fmt.Fprintln(cmd.OutOrStdout(), printable.Text(s.Name))
				return nil
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "created %s (%s of %s); waiting for it\n", what, spec.Type, t)
			return followSnapshot(cmd, t, s.Name, f.timeout)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.checkpoint, "checkpoint", false, "take a checkpoint instead of a savepoint (Flink 1.17+)")
	fl.StringVar(&f.format, "format", "", "the savepoint's format: canonical (portable between state backends) or native (faster); default the job's")
	fl.BoolVar(&f.disposeOnDelete, "dispose-on-delete", false, "remove the snapshot's storage when its FlinkSnapshot is deleted")
	fl.BoolVar(&f.keep, "keep", false, "exempt the snapshot from retention: it stays until its FlinkSnapshot is deleted")
	fl.StringVar(&f.name, "name", "", "name the FlinkSnapshot (default <APP>-manual-<random>)")
	fl.BoolVar(&f.noWait, "no-wait", false, "print the FlinkSnapshot's name and return without waiting for the snapshot")
	fl.BoolVar(&f.nonce, "nonce", false, "set savepointTriggerNonce instead of creating a FlinkSnapshot, for operators older than FlinkSnapshots")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Minute, "how long to wait for the snapshot")
	return cmd
}

// validate refuses flag combinations the API would refuse, or the nonce could not honour, before
// anything is written; it returns the spec the flags ask for, but its owner.
func (f *savepointFlags) validate(cmd *cobra.Command) (v1beta1.FlinkSnapshotSpec, error) {
	spec := v1beta1.FlinkSnapshotSpec{Type: v1beta1.SnapshotSavepoint, DisposeOnDelete: f.disposeOnDelete, Keep: f.keep}
	if f.nonce {
		for _, name := range snapshotOnlyFlags {
			if cmd.Flags().Changed(name) {
				return spec, exitWith(ExitError, "--%s needs a FlinkSnapshot; --nonce sets savepointTriggerNonce, which carries none", name)
			}
		}
		return spec, nil
	}
	if f.checkpoint {
		spec.Type = v1beta1.SnapshotCheckpoint
	}
	switch strings.ToLower(f.format) {
	case "":
	case "canonical":
		spec.FormatType = v1beta1.SavepointFormatCanonical
	case "native":
		spec.FormatType = v1beta1.SavepointFormatNative
	default:
		return spec, exitWith(ExitError, "--format %q: use canonical or native", f.format)
	}
	if f.checkpoint && spec.FormatType != "" {
		return spec, exitWith(ExitError, "--format is a savepoint's; a checkpoint is written in the job's own format")
	}
	return spec, nil
}

// nonceSavepoint asks for a savepoint the way operators older than FlinkSnapshots understand: a new
// savepointTriggerNonce, whose savepoint the owner's status.ledger then follows.
func nonceSavepoint(cmd *cobra.Command, t *target, timeout time.Duration) error {
	nonce := strconv.FormatInt(time.Now().UnixNano(), 36)
	spec, field := map[string]interface{}{"savepointTriggerNonce": nonce}, "spec.savepointTriggerNonce"
	if t.sessionJob {
		spec, field = map[string]interface{}{"job": spec}, "spec.job.savepointTriggerNonce"
	}
	if err := t.patchSpec(cmd.Context(), spec); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "%s: set %s %s; waiting for the savepoint\n", t, field, nonce)
	ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
	defer cancel()
	for {
		if v, err := t.get(ctx); err == nil && v.savepointNonce == v1beta1.Nonce(nonce) {
			// The operator asked for it, in the write that honoured the nonce: its ledger entry
			// says how it ended, and a savepoint Flink refused ends at once.
			switch e := v.manualSavepoint(); {
			case e == nil:
			case e.Result == v1beta1.StateCompleted:
				fmt.Fprintln(cmd.OutOrStdout(), printable.Text(e.Path))
				return nil
			case e.Result == v1beta1.StateFailed:
				return exitWith(ExitFailed, "the savepoint failed: %s", e.Reason)
			}
		}
		if sleep(ctx, time.Second) != nil {
			return exitWith(ExitTimeout, "%s: no savepoint within %s", t, timeout)
		}
	}
}
