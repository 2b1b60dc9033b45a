package cli

import (
	"context"
	"fmt"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/printable"
)

// ownerLabels are the labels that select the target's FlinkSnapshots. The owner's name is one only
// when it is a label value as it stands: a longer name is cut by the operator, and a cut name selects
// every owner it is the start of, so such owners are selected by kind and told apart by spec.owner.
func (t *target) ownerLabels() labels.Set {
	set := labels.Set{v1beta1.SnapshotOwnerKindLabel: t.kind()}
	if len(validation.IsValidLabelValue(t.name)) == 0 {
		set[v1beta1.SnapshotOwnerLabel] = t.name
	}
	return set
}

// createSnapshot creates a FlinkSnapshot of the target's job with the spec, named name or, without
// one, <owner>-manual-<random>. It carries the owner's labels from the start so that `snapshots` and
// `kubectl get fsnap -l` find it before the operator has seen it.
func (t *target) createSnapshot(ctx context.Context, name string, spec v1beta1.FlinkSnapshotSpec) (*v1beta1.FlinkSnapshot, error) {
	spec.Owner = v1beta1.SnapshotOwner{Kind: t.kind(), Name: t.name}
	s := &v1beta1.FlinkSnapshot{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: t.ns, Labels: t.ownerLabels()}, Spec: spec}
	if name == "" {
		s.GenerateName = t.name + "-manual-"
	}
	created, err := t.client.FlinkV1beta1().FlinkSnapshots(t.ns).Create(ctx, s, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		return nil, exitWith(ExitError, "FlinkSnapshot %s/%s already exists: give another --name", t.ns, name)
	case apierrors.IsNotFound(err):
		return nil, exitWith(ExitError, "creating a FlinkSnapshot of %s: %v (a cluster whose operator is older than FlinkSnapshots has no such resource: use --nonce)", t, err)
	case err != nil:
		return nil, exitWith(ExitError, "creating a FlinkSnapshot of %s: %v", t, err)
	}
	return created, nil
}

// followSnapshot reads the FlinkSnapshot once a second until the operator says how the snapshot
// ended: its path on stdout when it completed, Flink's reason when it failed. What happens in
// between (Pending, the operator's complaints) goes to stderr as it changes.
func followSnapshot(cmd *cobra.Command, t *target, name string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
	defer cancel()
	what := fmt.Sprintf("FlinkSnapshot %s/%s", t.ns, printable.Text(name))
	var last *v1beta1.FlinkSnapshotStatus
	for {
		s, err := t.client.FlinkV1beta1().FlinkSnapshots(t.ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return exitWith(ExitFailed, "%s was deleted before the snapshot ended", what)
		case err != nil && last == nil && ctx.Err() == nil:
			// Not one read of the object just created: the plugin may not read it (RBAC), which no
			// wait mends.
			return exitWith(ExitError, "reading %s: %v", what, err)
		case err != nil:
			// A read that fails now and then (an API server restarting) is tried again.
		case s.DeletionTimestamp != nil:
			// Held by the operator's finalizer while it disposes of the storage: gone for its user.
			return exitWith(ExitFailed, "%s is being deleted", what)
		case s.Status.State == v1beta1.StateCompleted:
			fmt.Fprintln(cmd.OutOrStdout(), printable.Text(s.Status.Path))
			return nil
		case s.Status.State == v1beta1.StateFailed:
			return exitWith(ExitFailed, "%s failed: %s", what, orDash(s.Status.Error))
		default:
			st, prev := s.Status, v1beta1.FlinkSnapshotStatus{}
			if last != nil {
				prev = *last
			}
			if st.State != prev.State || st.Error != prev.Error {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s\n", what, printable.Text(describeSnapshotStatus(st)))
			}
			last = &st
		}
		if sleep(ctx, time.Second) != nil {
			state := "not read"
			if last != nil {
				state = describeSnapshotStatus(*last)
			}
			return exitWith(ExitTimeout, "%s did not end within %s (%s); it stays and the operator goes on with it: follow it with kubectl get fsnap %s -n %s",
				what, timeout, state, name, t.ns)
		}
	}
}

// describeSnapshotStatus says where an unfinished snapshot stands, in a few words.
func describeSnapshotStatus(st v1beta1.FlinkSnapshotStatus) string {
	switch {
	case st.State == "" && st.Error == "":
		return "not yet taken up by the operator"
	case st.State == "":
		return "the operator does not take it: " + st.Error
	}
	s := "state " + string(st.State)
	if st.TriggerID != "" {
		s += ", trigger " + st.TriggerID
	}
	if st.Error != "" {
		s += ": " + st.Error
	}
	return s
}

// snapshots are the target's FlinkSnapshots, newest first. They may outlive it: a deleted owner's
// are listed too.
func (t *target) snapshots(ctx context.Context) ([]v1beta1.FlinkSnapshot, error) {
	list, err := t.client.FlinkV1beta1().FlinkSnapshots(t.ns).List(ctx, metav1.ListOptions{LabelSelector: t.ownerLabels().String()})
	if err != nil {
		return nil, exitWith(ExitError, "listing the FlinkSnapshots of %s: %v", t, err)
	}
	var own []v1beta1.FlinkSnapshot
	for _, s := range list.Items {
		// The labels may be cut (see ownerLabels) or written by hand; spec.owner cannot change.
		if s.Spec.Owner.Kind == t.kind() && s.Spec.Owner.Name == t.name {
			own = append(own, s)
		}
	}
	sort.SliceStable(own, func(i, j int) bool {
		a, b := own[i].CreationTimestamp, own[j].CreationTimestamp
		if !a.Equal(&b) {
			return b.Before(&a)
		}
		return own[i].Name < own[j].Name
	})
	return own, nil
}

func newSnapshotsCommand(o *options) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "snapshots APP",
		Short: "List the FlinkSnapshots of an application or session job, newest first",
		Long: "List the FlinkSnapshots of APP, newest first: the savepoints and checkpoints the operator took of its\n" +
			"job, and those asked for with `kubectl flink savepoint` or registered by path. Those of a deleted\n" +
			"application are listed too: they outlive it. -o name prints their names alone, one a line.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "" && output != "name" {
				return exitWith(ExitError, "unknown output %q: use name, or none for a table", output)
			}
			t, err := o.target(args[0])
			if err != nil {
				return err
			}
			own, err := t.snapshots(cmd.Context())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if output == "name" {
				for _, s := range own {
					fmt.Fprintln(out, printable.Text(s.Name))
				}
				return nil
			}
			if len(own) == 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "no FlinkSnapshots of %s\n", t)
				return nil
			}
			now := time.Now()
			w := tabwriter.NewWriter(out, 0, 0, 3, ' ', 0)
			fmt.Fprintln(w, "NAME\tTYPE\tPURPOSE\tSTATE\tPATH\tAGE")
			for _, s := range own {
				age := "-"
				if !s.CreationTimestamp.IsZero() {
					age = duration.HumanDuration(now.Sub(s.CreationTimestamp.Time))
				}
				// printable.Text also writes tabs out, so that no value can shift the columns.
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", printable.Text(s.Name), printable.Text(orDash(string(s.Spec.Type))),
					printable.Text(orDash(string(s.Status.Purpose))), printable.Text(orDash(string(s.Status.State))),
					printable.Text(orDash(s.Status.Path)), age)
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "name prints the names alone")
	return cmd
}
