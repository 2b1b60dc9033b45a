package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// patchCommands are the verbs that change the spec.
func patchCommands(o *options) []*cobra.Command {
	state := func(s v1beta1.JobDesiredState) func(t *target, v *view) (map[string]interface{}, string, error) {
		return func(t *target, v *view) (map[string]interface{}, string, error) {
			if t.sessionJob {
				return map[string]interface{}{"job": map[string]interface{}{"state": s}}, "spec.job.state " + string(s), nil
			}
			return map[string]interface{}{"state": s}, "spec.state " + string(s), nil
		}
	}
	return []*cobra.Command{
		verb(o, "suspend", "Stop the job per its upgradeMode, keeping its state, until resumed", state(v1beta1.JobStateSuspended)),
		verb(o, "resume", "Start a suspended job again from the state it was suspended with", state(v1beta1.JobStateRunning)),
		verb(o, "restart", "Restart the job, its state carried per upgradeMode (a new restartNonce)",
			func(t *target, v *view) (map[string]interface{}, string, error) {
				nonce := strconv.FormatInt(time.Now().UnixNano(), 36)
				if t.sessionJob {
					return map[string]interface{}{"job": map[string]interface{}{"restartNonce": nonce}}, "spec.job.restartNonce " + nonce, nil
				}
				return map[string]interface{}{"restartNonce": nonce}, "spec.restartNonce " + nonce, nil
			}),
		verb(o, "rollback", "Abandon the update in progress and return to the last stable spec (forceRollback)",
			func(t *target, v *view) (map[string]interface{}, string, error) {
				if t.sessionJob {
					return nil, "", exitWith(ExitError, "a FlinkSessionJob has no rollback; change its spec back instead")
				}
				return map[string]interface{}{"forceRollback": true}, "spec.forceRollback true (set it back to false before the next update)", nil
			}),
		verb(o, "promote", "BlueGreen: make the new version the deployed one and tear the previous one down",
			func(t *target, v *view) (map[string]interface{}, string, error) {
				s, _, err := dualVersions(t, v)
				if err != nil {
					return nil, "", err
				}
				return map[string]interface{}{"tearDownVersionHash": s.SpecHash},
					fmt.Sprintf("spec.tearDownVersionHash %s (version %s goes)", s.SpecHash, s.Version), nil
			}),
		verb(o, "abort", "BlueGreen: tear the new version down; the deployed one stays",
			func(t *target, v *view) (map[string]interface{}, string, error) {
				_, c, err := dualVersions(t, v)
				if err != nil {
					return nil, "", err
				}
				return map[string]interface{}{"tearDownVersionHash": c.SpecHash},
					fmt.Sprintf("spec.tearDownVersionHash %s (version %s goes)", c.SpecHash, c.Version), nil
			}),
	}
}

// dualVersions are the deployed and the new version of a BlueGreen application running both.
func dualVersions(t *target, v *view) (stable, candidate *v1beta1.DeploymentRecord, err error) {
	if t.sessionJob || v.app == nil || v.app.Spec.DeploymentMode != v1beta1.DeploymentModeBlueGreen {
		return nil, nil, exitWith(ExitError, "%s does not run BlueGreen versions", t)
	}
	s, c := v.deployments.Stable, v.deployments.Candidate
	if v.phase != string(v1beta1.PhaseDualRunning) || s == nil || c == nil {
		return nil, nil, exitWith(ExitError, "%s runs one version (phase %s); promote and abort apply while two run (DualRunning)", t, v.phase)
	}
	return s, c, nil
}

func verb(o *options, name, short string, decide func(*target, *view) (map[string]interface{}, string, error)) *cobra.Command {
	return &cobra.Command{
		Use:   name + " APP",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := o.target(args[0])
			if err != nil {
				return err
			}
			v, err := t.get(cmd.Context())
			if err != nil {
				return err
			}
			spec, what, err := decide(t, v)
			if err != nil {
				return err
			}
			if err := t.patchSpec(cmd.Context(), spec); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: set %s\n", t, what)
			return nil
		},
	}
}
