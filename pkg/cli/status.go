package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/yaml"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/printable"
)

func jsonMarshal(v interface{}) ([]byte, error) { return json.Marshal(v) }

func newStatusCommand(o *options) *cobra.Command {
	var output string
	var watch bool
	cmd := &cobra.Command{
		Use:   "status APP",
		Short: "Show an application as a tree: its deployments, clusters, job, health and last transitions",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := o.target(args[0])
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			last := ""
			for {
				v, err := t.get(ctx)
				if err != nil {
					return err
				}
				out, err := render(v, output, time.Now())
				if err != nil {
					return err
				}
				if out != last {
					if watch && last != "" {
						fmt.Fprintln(cmd.OutOrStdout())
					}
					fmt.Fprint(cmd.OutOrStdout(), out)
					last = out
				}
				if !watch {
					return nil
				}
				if err := sleep(ctx, 2*time.Second); err != nil {
					return nil
				}
			}
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml prints the object itself")
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "print again whenever it changes")
	return cmd
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func render(v *view, output string, now time.Time) (string, error) {
	switch output {
	case "json":
		b, err := json.MarshalIndent(v.object, "", "  ")
		return string(b) + "\n", err
	case "yaml":
		b, err := yaml.Marshal(v.object)
		return string(b), err
	case "":
		var b strings.Builder
		tree(&b, v, now)
		return b.String(), nil
	}
	return "", exitWith(ExitError, "unknown output %q: use json or yaml", output)
}

// tree writes the status as a tree a terminal shows well.
func tree(w io.Writer, v *view, now time.Time) {
	ready := "Ready unknown"
	if c := meta.FindStatusCondition(v.conditions, v1beta1.ConditionReady); c != nil {
		ready = fmt.Sprintf("Ready %s (%s)", c.Status, c.Reason)
	}
	fmt.Fprintf(w, "%s %s/%s  %s  %s\n", v.kind, v.ns, v.name, v.phase, printable.Text(ready))
	var lines []string
	if v.observed != v.generation {
		lines = append(lines, fmt.Sprintf("spec generation %d not yet seen by the operator (it saw %d)", v.generation, v.observed))
	}
	if v.reason != "" {
		lines = append(lines, "reason: "+v.reason)
	}
	for _, d := range []struct {
		name string
		rec  *v1beta1.DeploymentRecord
	}{{"stable", v.deployments.Stable}, {"candidate", v.deployments.Candidate}} {
		if d.rec != nil {
			lines = append(lines, describeRecord(d.name, d.rec))
		}
	}
	js := v.jobStatus
	if js.JobID != "" {
		job := fmt.Sprintf("job %s %s", js.JobID, orDash(string(js.State)))
		if js.TotalTasks > 0 {
			job += fmt.Sprintf(", %d/%d tasks running", js.RunningTasks, js.TotalTasks)
		}
		if js.Health != "" {
			job += ", health " + string(js.Health)
		}
		job += fmt.Sprintf(", %d restarts", js.JobRestartCount)
		lines = append(lines, job)
		if js.RestorePath != "" {
			lines = append(lines, "restored from "+js.RestorePath)
		}
		if js.LastCheckpointPath != "" && js.LastCheckpointTime != nil {
			lines = append(lines, fmt.Sprintf("checkpoint %s (%s ago)", js.LastCheckpointPath, now.Sub(js.LastCheckpointTime.Time).Round(time.Second)))
		}
	}
	if v.app != nil {
		cs := v.app.Status.ClusterStatus
		if cs.NumberOfTaskSlots > 0 || cs.NumberOfTaskManagers > 0 {
			lines = append(lines, fmt.Sprintf("cluster %d/%d TaskManagers healthy, %d slots (%d free), health %s",
				cs.HealthyTaskManagers, cs.NumberOfTaskManagers, cs.NumberOfTaskSlots, cs.AvailableTaskSlots, orDash(string(cs.Health))))
		}
		if url := cs.ClusterOverviewURL; url != "" {
			lines = append(lines, "Flink UI "+url)
		}
		if as := v.app.Status.Autoscaler; as != nil {
			lines = append(lines, "autoscaler: "+as.Reason)
			for _, vs := range as.Vertices {
				lines = append(lines, fmt.Sprintf("  vertex %s: parallelism %d, recommended %d", orDash(vs.Name), vs.Current, vs.Recommended))
			}
		}
		for _, vs := range v.app.Status.VersionStatuses {
			if vs.Version == "" {
				continue // the Lyft shape keeps a second, empty entry while one version runs
			}
			lines = append(lines, fmt.Sprintf("version %s (hash %s): job %s %s", vs.Version, vs.VersionHash, orDash(vs.JobStatus.JobID), orDash(string(vs.JobStatus.State))))
		}
	} else if v.job != nil {
		lines = append(lines, "session cluster "+v.job.Spec.ClusterName)
	}
	if next := v.deployments.NextRestorePath; next != "" {
		lines = append(lines, "state for the next job: "+next)
	}
	for _, e := range v.ledger {
		if e.Result == v1beta1.StatePending {
			lines = append(lines, fmt.Sprintf("%s savepoint of job %s in progress (trigger %s)", e.Purpose, e.JobID, e.TriggerID))
		}
	}
	for i, l := range lines {
		branch := "├─ "
		if i == len(lines)-1 && len(v.history) == 0 {
			branch = "└─ "
		}
		fmt.Fprintf(w, "%s%s\n", branch, printable.Text(l))
	}
	if n := len(v.history); n > 0 {
		fmt.Fprintln(w, "└─ last transitions:")
		for _, h := range v.history[max(0, n-5):] {
			fmt.Fprintf(w, "   %s  %s -> %s  %s\n", h.at.Format("15:04:05"), orDash(h.from), h.to, printable.Text(h.reason))
		}
	}
}

func describeRecord(name string, r *v1beta1.DeploymentRecord) string {
	s := fmt.Sprintf("%s: spec %s on cluster %s", name, r.SpecHash, r.ClusterHash)
	if r.Version != "" {
		s += ", version " + string(r.Version)
	}
	if r.JobID != "" {
		s += ", job " + r.JobID
	}
	if r.Kind != "" {
		s += " (" + string(r.Kind) + ")"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newHistoryCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "history APP",
		Short: "List the application's last phase transitions",
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
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "%-20s  %-16s  %-16s  %s\n", "TIME", "FROM", "TO", "REASON")
			for _, h := range v.history {
				fmt.Fprintf(out, "%-20s  %-16s  %-16s  %s\n", h.at.UTC().Format(time.RFC3339), orDash(h.from), h.to, printable.Text(h.reason))
			}
			return nil
		},
	}
}
