package cli

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
)

// target is the object a command works on: a FlinkApplication, or a FlinkSessionJob named
// sessionjob/NAME.
type target struct {
	sessionJob bool
	name, ns   string
	client     versioned.Interface
}

func parseTarget(arg string) (sessionJob bool, name string, err error) {
	kind, name, found := strings.Cut(arg, "/")
	if !found {
		return false, arg, nil
	}
	switch strings.ToLower(kind) {
	case "flinkapplication", "flinkapplications", "flinkapp", "app":
		return false, name, nil
	case "flinksessionjob", "flinksessionjobs", "sessionjob", "fsj":
		return true, name, nil
	}
	return false, "", exitWith(ExitError, "%q: name a FlinkApplication as NAME, or a FlinkSessionJob as sessionjob/NAME", arg)
}

func (o *options) target(arg string) (*target, error) {
	sessionJob, name, err := parseTarget(arg)
	if err != nil {
		return nil, err
	}
	c, ns, err := o.connect()
	if err != nil {
		return nil, err
	}
	return &target{sessionJob: sessionJob, name: name, ns: ns, client: c}, nil
}

func (t *target) kind() string {
	if t.sessionJob {
		return "FlinkSessionJob"
	}
	return "FlinkApplication"
}

func (t *target) String() string { return fmt.Sprintf("%s %s/%s", t.kind(), t.ns, t.name) }

// view is what the commands read of either kind.
type view struct {
	kind, name, ns string
	generation     int64
	object         interface{}
	app            *v1beta1.FlinkApplication
	job            *v1beta1.FlinkSessionJob
	phase          string
	reason         string
	observed       int64
	conditions     []metav1.Condition
	jobStatus      v1beta1.FlinkJobStatus
	deployments    v1beta1.Deployments
	history        []transition
	// savepointNonce is the savepointTriggerNonce last honoured; savepoints, the savepoints taken;
	// ledger, every state the operator knows of, savepoints in flight included.
	savepointNonce v1beta1.Nonce
	savepoints     []v1beta1.SavepointRecord
	ledger         []v1beta1.StateEntry
}

type transition struct {
	from, to, reason string
	at               metav1.Time
}

func (t *target) get(ctx context.Context) (*view, error) {
	var v *view
	var err error
	if t.sessionJob {
		var j *v1beta1.FlinkSessionJob
		if j, err = t.client.FlinkV1beta1().FlinkSessionJobs(t.ns).Get(ctx, t.name, metav1.GetOptions{}); err == nil {
			v = &view{kind: t.kind(), name: j.Name, ns: j.Namespace, generation: j.Generation, object: j, job: j,
				phase: string(j.Status.Phase), reason: j.Status.Reason, observed: j.Status.ObservedGeneration,
				conditions: j.Status.Conditions, jobStatus: j.Status.JobStatus, deployments: j.Status.Deployments,
				savepointNonce: j.Status.SavepointTriggerNonce, savepoints: j.Status.Savepoints,
				ledger: j.Status.Ledger}
			for _, h := range j.Status.History {
				v.history = append(v.history, transition{string(h.From), string(h.To), h.Reason, h.Time})
			}
		}
	} else {
		var a *v1beta1.FlinkApplication
		if a, err = t.client.FlinkV1beta1().FlinkApplications(t.ns).Get(ctx, t.name, metav1.GetOptions{}); err == nil {
			v = &view{kind: t.kind(), name: a.Name, ns: a.Namespace, generation: a.Generation, object: a, app: a,
				phase: string(a.Status.Phase), reason: a.Status.Reason, observed: a.Status.ObservedGeneration,
				conditions: a.Status.Conditions, jobStatus: a.Status.JobStatus, deployments: a.Status.Deployments,
				savepointNonce: a.Status.SavepointTriggerNonce, savepoints: a.Status.Savepoints,
				ledger: a.Status.Ledger}
			for _, h := range a.Status.History {
				v.history = append(v.history, transition{string(h.From), string(h.To), h.Reason, h.Time})
			}
		}
	}
	if apierrors.IsNotFound(err) {
		return nil, exitWith(ExitError, "%s not found", t)
	}
	if err != nil {
		return nil, exitWith(ExitError, "reading %s: %v", t, err)
	}
	if v.phase == "" {
		v.phase = string(v1beta1.PhaseNew)
	}
	return v, nil
}

// patchSpec sends a merge patch of the object's spec: the only way the plugin changes anything.
func (t *target) patchSpec(ctx context.Context, spec map[string]interface{}) error {
	patch, err := jsonMarshal(map[string]interface{}{"spec": spec})
	if err != nil {
		return err
	}
	if t.sessionJob {
		_, err = t.client.FlinkV1beta1().FlinkSessionJobs(t.ns).Patch(ctx, t.name, types.MergePatchType, patch, metav1.PatchOptions{})
	} else {
		_, err = t.client.FlinkV1beta1().FlinkApplications(t.ns).Patch(ctx, t.name, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	if apierrors.IsNotFound(err) {
		return exitWith(ExitError, "%s not found", t)
	}
	if err != nil {
		return exitWith(ExitError, "patching %s: %v", t, err)
	}
	return nil
}

// manualSavepoint is the manual savepoint the operator asked for last: the one of the nonce it
// honoured last, as the nonce is recorded in the same write as the ledger entry. Nil before any.
func (v *view) manualSavepoint() *v1beta1.StateEntry {
	for i := len(v.ledger) - 1; i >= 0; i-- {
		if v.ledger[i].Purpose == v1beta1.SavepointManual {
			return &v.ledger[i]
		}
	}
	return nil
}
