package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// snapshot is a FlinkSnapshot of the owner created age ago, labelled as the operator labels it: the
// owner's name cut to 63 characters.
func snapshot(name, kind, owner string, age time.Duration, st v1beta1.FlinkSnapshotStatus) *v1beta1.FlinkSnapshot {
	return &v1beta1.FlinkSnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "jobs", CreationTimestamp: metav1.NewTime(time.Now().Add(-age)),
			Labels: map[string]string{v1beta1.SnapshotOwnerKindLabel: kind, v1beta1.SnapshotOwnerLabel: owner[:min(len(owner), 63)]}},
		Spec:   v1beta1.FlinkSnapshotSpec{Owner: v1beta1.SnapshotOwner{Kind: kind, Name: owner}, Type: v1beta1.SnapshotSavepoint},
		Status: st,
	}
}

// The owner's FlinkSnapshots, selected by its labels, newest first, with what came from Flink escaped;
// neither another application's nor a session job of the same name's.
func TestSnapshotsListsTheOwnersNewestFirst(t *testing.T) {
	c := apiServer(
		// Named against their age, so that the fake's order by name is not the one wanted.
		snapshot("a-old", "FlinkApplication", "wc", 72*time.Hour,
			v1beta1.FlinkSnapshotStatus{State: v1beta1.StateCompleted, Purpose: v1beta1.SavepointUpgrade, Path: "s3://b/sp-1\x1b[2J"}),
		snapshot("b-new", "FlinkApplication", "wc", 26*time.Hour,
			v1beta1.FlinkSnapshotStatus{State: v1beta1.StatePending, Purpose: v1beta1.SavepointManual}),
		snapshot("other", "FlinkApplication", "other", time.Hour, v1beta1.FlinkSnapshotStatus{}),
		snapshot("same-name-job", "FlinkSessionJob", "wc", time.Hour, v1beta1.FlinkSnapshotStatus{}),
	)
	code, out, errOut := run(t, c, "snapshots", "wc")
	require.Equal(t, ExitOK, code, errOut)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 3, out)
	assert.Equal(t, []string{"NAME", "TYPE", "PURPOSE", "STATE", "PATH", "AGE"}, strings.Fields(lines[0]))
	assert.Equal(t, []string{"b-new", "Savepoint", "Manual", "Pending", "-", "26h"}, strings.Fields(lines[1]))
	assert.Equal(t, []string{"a-old", "Savepoint", "Upgrade", "Completed", `s3://b/sp-1\x1b[2J`, "3d"}, strings.Fields(lines[2]))

	code, out, _ = run(t, c, "snapshots", "wc", "-o", "name")
	assert.Equal(t, ExitOK, code)
	assert.Equal(t, "b-new\na-old\n", out)

	// The API server selects them: a namespace's snapshots of every owner are not read.
	var selectors []string
	for _, a := range c.Actions() {
		if l, ok := a.(k8stesting.ListAction); ok && a.GetResource().Resource == "flinksnapshots" {
			selectors = append(selectors, l.GetListRestrictions().Labels.String())
		}
	}
	sel := "flink.k8s.io/owner=wc,flink.k8s.io/owner-kind=FlinkApplication"
	assert.Equal(t, []string{sel, sel}, selectors)

	code, out, errOut = run(t, c, "snapshots", "fsj/none")
	assert.Equal(t, ExitOK, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "no FlinkSnapshots of FlinkSessionJob jobs/none")
}

// Owners whose names are longer than a label value share the cut label; spec.owner tells them apart.
func TestSnapshotsTellsApartOwnersOfTheSameCutLabel(t *testing.T) {
	long := strings.Repeat("x", 63)
	c := apiServer(
		snapshot("of-one", "FlinkSessionJob", long+"-one", time.Hour, v1beta1.FlinkSnapshotStatus{}),
		snapshot("of-two", "FlinkSessionJob", long+"-two", time.Hour, v1beta1.FlinkSnapshotStatus{}),
	)
	code, out, errOut := run(t, c, "snapshots", "fsj/"+long+"-one", "-o", "name")
	require.Equal(t, ExitOK, code, errOut)
	assert.Equal(t, "of-one\n", out)
}
