package cli

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/printable"
)

func newSavepointCommand(o *options) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "savepoint APP",
		Short: "Take a savepoint of the running job, which keeps running, and print its path (a new savepointTriggerNonce)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := o.target(args[0])
			if err != nil {
				return err
			}
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
				if v, err := t.get(ctx); err == nil && v.savepointNonce == nonce {
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
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long to wait for the savepoint")
	return cmd
}
