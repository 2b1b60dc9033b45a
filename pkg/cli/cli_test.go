package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
	appfake "github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned/fake"
)

func run(t *testing.T, c versioned.Interface, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(args, &out, &errOut, func(string, string) (versioned.Interface, string, error) { return c, "jobs", nil })
	return code, out.String(), errOut.String()
}

func runningApp() *v1beta1.FlinkApplication {
	now := metav1.NewTime(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	return &v1beta1.FlinkApplication{
		ObjectMeta: metav1.ObjectMeta{Name: "wc", Namespace: "jobs", Generation: 2},
		Status: v1beta1.FlinkApplicationStatus{
			Phase: v1beta1.PhaseRunning,
			MachineStatus: v1beta1.MachineStatus{ObservedGeneration: 2,
				Conditions: []metav1.Condition{{Type: v1beta1.ConditionReady, Status: metav1.ConditionTrue, Reason: "JobRunning"}}},
			JobOwnerStatus: v1beta1.JobOwnerStatus{
				JobStatus:   v1beta1.FlinkJobStatus{JobID: "0123", State: v1beta1.JobRunning, RunningTasks: 3, TotalTasks: 3, Health: v1beta1.Green},
				Deployments: v1beta1.Deployments{Stable: &v1beta1.DeploymentRecord{SpecHash: "aaaa", ClusterHash: "aaaa", JobID: "0123"}}},
			History: []v1beta1.PhaseTransition{{From: v1beta1.PhaseSubmitting, To: v1beta1.PhaseRunning, Time: now, Reason: "JobRunning"}},
		},
	}
}

func TestStatusDrawsATree(t *testing.T) {
	c := appfake.NewSimpleClientset(runningApp())
	code, out, _ := run(t, c, "status", "wc")
	assert.Equal(t, ExitOK, code)
	assert.Contains(t, out, "FlinkApplication jobs/wc  Running  Ready True (JobRunning)")
	assert.Contains(t, out, "├─ stable: spec aaaa on cluster aaaa, job 0123")
	assert.Contains(t, out, "job 0123 RUNNING, 3/3 tasks running, health Green")
	assert.Contains(t, out, "└─ last transitions:")
	assert.NotContains(t, out, "Flink UI", "no Ingress, no URL")
	withUI := runningApp()
	withUI.Status.ClusterStatus.ClusterOverviewURL = "https://wc.flink.example.com/#/overview"
	_, ui, _ := run(t, appfake.NewSimpleClientset(withUI), "status", "wc")
	assert.Contains(t, ui, "Flink UI https://wc.flink.example.com/#/overview")
	assert.NotContains(t, out, "autoscaler")
	scaled := runningApp()
	scaled.Status.Autoscaler = &v1beta1.AutoscalerStatus{Reason: "recommends Map 3→8", Vertices: []v1beta1.VertexScaling{
		{ID: "v1", Name: "Source: orders", Current: 3, Recommended: 3}, {ID: "v2", Name: "Map", Current: 3, Recommended: 8}}}
	_, as, _ := run(t, appfake.NewSimpleClientset(scaled), "status", "wc")
	assert.Contains(t, as, "autoscaler: recommends Map 3→8")
	assert.Contains(t, as, "vertex Map: parallelism 3, recommended 8")
	assert.Contains(t, as, "vertex Source: orders: parallelism 3, recommended 3")
	code, out, _ = run(t, c, "status", "wc", "-o", "json")
	assert.Equal(t, ExitOK, code)
	assert.Contains(t, out, `"jobID": "0123"`)
	code, _, errOut := run(t, c, "status", "gone")
	assert.Equal(t, ExitError, code)
	assert.Contains(t, errOut, "not found")
}

func TestVerbsPatchTheSpecOfEitherKind(t *testing.T) {
	job := &v1beta1.FlinkSessionJob{ObjectMeta: metav1.ObjectMeta{Name: "etl", Namespace: "jobs"}}
	c := appfake.NewSimpleClientset(runningApp(), job)
	ctx := context.Background()
	code, out, _ := run(t, c, "suspend", "wc")
	require.Equal(t, ExitOK, code)
	assert.Contains(t, out, "spec.state Suspended")
	app, _ := c.FlinkV1beta1().FlinkApplications("jobs").Get(ctx, "wc", metav1.GetOptions{})
	assert.Equal(t, v1beta1.JobStateSuspended, app.Spec.State)

	code, _, _ = run(t, c, "restart", "sessionjob/etl")
	require.Equal(t, ExitOK, code)
	j, _ := c.FlinkV1beta1().FlinkSessionJobs("jobs").Get(ctx, "etl", metav1.GetOptions{})
	assert.NotEmpty(t, j.Spec.Job.RestartNonce)

	code, _, errOut := run(t, c, "promote", "wc")
	assert.Equal(t, ExitError, code)
	assert.Contains(t, errOut, "does not run BlueGreen versions")
	code, _, errOut = run(t, c, "rollback", "fsj/etl")
	assert.Equal(t, ExitError, code)
	assert.Contains(t, errOut, "no rollback")
	code, _, _ = run(t, c, "suspend", "cronjob/x")
	assert.Equal(t, ExitError, code)
}

func TestWaitExitCodes(t *testing.T) {
	app := runningApp()
	c := appfake.NewSimpleClientset(app)
	code, _, _ := run(t, c, "wait", "wc", "--timeout", "3s")
	assert.Equal(t, ExitOK, code)

	// A spec the operator has not seen yet is not waited for as reached.
	app.Generation = 3
	_, _ = c.FlinkV1beta1().FlinkApplications("jobs").Update(context.Background(), app, metav1.UpdateOptions{})
	code, _, errOut := run(t, c, "wait", "wc", "--timeout", "1500ms")
	assert.Equal(t, ExitTimeout, code)
	assert.True(t, strings.Contains(errOut, "did not reach Running"), errOut)

	app.Status.ObservedGeneration, app.Status.Phase, app.Status.Reason = 3, v1beta1.PhaseDeployFailed, "job failed"
	_, _ = c.FlinkV1beta1().FlinkApplications("jobs").UpdateStatus(context.Background(), app, metav1.UpdateOptions{})
	code, _, errOut = run(t, c, "wait", "wc", "--timeout", "3s")
	assert.Equal(t, ExitFailed, code)
	assert.Contains(t, errOut, "DeployFailed")
}

// With --nonce, for operators older than FlinkSnapshots, the savepoint verb sets the nonce and follows
// the operator's ledger entry for it: it waits while the savepoint is pending and ends at once with
// Flink's reason when it fails. It creates no FlinkSnapshot.
func TestSavepointEndsWithTheLedgersAnswer(t *testing.T) {
	c := appfake.NewSimpleClientset(runningApp())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		// The operator: it honours the nonce with a pending entry, then Flink refuses the savepoint.
		for ctx.Err() == nil {
			app, err := c.FlinkV1beta1().FlinkApplications("jobs").Get(ctx, "wc", metav1.GetOptions{})
			if err == nil && app.Spec.SavepointTriggerNonce != "" {
				now := metav1.Now()
				app.Status.SavepointTriggerNonce = app.Spec.SavepointTriggerNonce
				app.Status.Ledger = []v1beta1.StateEntry{{Purpose: v1beta1.SavepointManual, JobID: "0123", TriggerID: "t", TriggerTime: &now, Result: v1beta1.StatePending}}
				_, _ = c.FlinkV1beta1().FlinkApplications("jobs").UpdateStatus(ctx, app, metav1.UpdateOptions{})
				time.Sleep(1500 * time.Millisecond)
				app.Status.Ledger[0].Result, app.Status.Ledger[0].Reason = v1beta1.StateFailed, "Flink refused the savepoint: no savepoint directory"
				_, _ = c.FlinkV1beta1().FlinkApplications("jobs").UpdateStatus(ctx, app, metav1.UpdateOptions{})
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	code, _, errOut := run(t, c, "savepoint", "wc", "--nonce", "--timeout", "8s")
	assert.Equal(t, ExitFailed, code, "it ends when the savepoint fails, not at its timeout: %s", errOut)
	assert.Contains(t, errOut, "no savepoint directory")
	snapshots, err := c.FlinkV1beta1().FlinkSnapshots("jobs").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, snapshots.Items)
}
