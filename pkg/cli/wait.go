package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

func newWaitCommand(o *options) *cobra.Command {
	var phase string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "wait APP",
		Short: "Wait until the application reaches a phase with the latest spec; exit 0 reached, 1 timed out, 2 failed, 3 error",
		Long: "Wait until the operator has seen the latest spec and the application is in the phase (Running: with its\n" +
			"job running and Ready). Exit codes: 0 reached; 1 the timeout passed; 2 it reached DeployFailed (or\n" +
			"Suspended) instead, which it does not leave on its own; 3 bad usage or the object cannot be read.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := o.target(args[0])
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			var last *view
			for {
				v, err := t.get(ctx)
				if err == nil {
					last = v
					switch done, failed := waitState(v, phase); {
					case done:
						fmt.Fprintf(cmd.OutOrStdout(), "%s is %s\n", t, v.phase)
						return nil
					case failed:
						return exitWith(ExitFailed, "%s is %s, not %s: %s", t, v.phase, phase, v.reason)
					}
				} else if ctx.Err() == nil && last == nil {
					return err
				}
				if sleep(ctx, time.Second) != nil {
					if last == nil {
						return exitWith(ExitTimeout, "%s: not read within %s", t, timeout)
					}
					return exitWith(ExitTimeout, "%s did not reach %s within %s: it is %s (%s)", t, phase, timeout, last.phase, last.reason)
				}
			}
		},
	}
	cmd.Flags().StringVar(&phase, "for", string(v1beta1.PhaseRunning), "the phase to wait for")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "how long to wait")
	return cmd
}

// waitState tells whether the object reached the phase on its latest spec, or a resting phase it
// does not leave on its own for the one awaited.
func waitState(v *view, phase string) (done, failed bool) {
	current := v.observed == v.generation
	if !current {
		return false, false
	}
	if v.phase == phase {
		if phase != string(v1beta1.PhaseRunning) {
			return true, false
		}
		c := meta.FindStatusCondition(v.conditions, v1beta1.ConditionReady)
		return c != nil && c.Status == metav1.ConditionTrue, false
	}
	switch v.phase {
	case string(v1beta1.PhaseDeployFailed), string(v1beta1.PhaseSuspended):
		return false, true
	}
	return false, false
}
