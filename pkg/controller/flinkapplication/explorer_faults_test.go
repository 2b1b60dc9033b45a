package flinkapplication

import (
	"context"
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

// The faults the explorer injects between passes: what Flink does (failing or hanging savepoints,
// jobs that fail, errors and lost answers, slow answers, JobManager restarts), what Kubernetes does
// (a Deployment deleted, pods not ready) and what happens to the operator (killed at one of its
// next writes, restarted, down for a while).

type fault struct {
	name   string
	weight int
	do     func(x *explorer) string
}

var faults = []fault{
	{"JobManager faults", 8, (*explorer).setJobManagerFaults},
	{"JobManager restart", 2, (*explorer).restartJobManager},
	{"job fails", 3, (*explorer).failAJob},
	{"Deployment deleted", 2, (*explorer).deleteADeployment},
	{"TaskManagers not ready", 2, (*explorer).toggleNotReady},
	{"slow answers", 2, (*explorer).toggleSlowAnswers},
	{"operator killed at a write", 10, (*explorer).armCrash},
	{"operator restarted", 2, (*explorer).restartTheOperator},
	{"operator down", 1, (*explorer).operatorDown},
}

// injectFault injects one fault, drawn by weight among those that apply now.
func (x *explorer) injectFault() {
	x.steps++
	x.faults++
	total := 0
	for _, f := range faults {
		total += f.weight
	}
	for try := 0; try < 20; try++ {
		n := x.rng.IntN(total)
		for _, f := range faults {
			if n -= f.weight; n < 0 {
				if did := f.do(x); did != "" {
					x.note("fault: %s", did)
					return
				}
				break
			}
		}
	}
	x.note("fault: nothing applied")
}

// jobManagers lists the running simulated JobManagers by service name.
func (x *explorer) jobManagers() []string {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	var out []string
	for name := range x.w.jms {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func (x *explorer) jobManager(name string) *flinksim.JobManager {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	return x.w.jms[name]
}

// jobManagerFaults are the faults a JobManager may be given; the first clears them.
type jobManagerFault struct {
	name   string
	faults flinksim.Faults
}

var jobManagerFaults = []jobManagerFault{
	{"none", flinksim.Faults{}},
	{"none", flinksim.Faults{}},
	{"failing savepoints", flinksim.Faults{FailSavepoints: true}},
	{"hanging savepoints", flinksim.Faults{HangSavepoints: true}},
	{"jobs fail 15 s after they run", flinksim.Faults{FailJobsAfter: 15 * time.Second}},
	{"tasks fail every 10 s", flinksim.Faults{RestartJobsEvery: 10 * time.Second}},
	{"a fifth of the requests fail", flinksim.Faults{ErrorRate: map[string]float64{flinksim.AnyEndpoint: 0.2}}},
	{"half the answers to savepoints, cancels and submissions are lost", flinksim.Faults{DropRate: map[string]float64{
		flinksim.EndpointSavepointTrigger: 0.5, flinksim.EndpointCancel: 0.5, flinksim.EndpointJarRun: 0.5, flinksim.EndpointStop: 0.5}}},
	{"submissions show 3 s late", flinksim.Faults{SubmitRegistersAfter: 3 * time.Second}},
	{"the first 3 requests of each endpoint fail", flinksim.Faults{FailFirst: map[string]int{flinksim.AnyEndpoint: 3}}},
	{"job status unreadable", flinksim.Faults{ErrorRate: map[string]float64{flinksim.EndpointJob: 1}}},
}

func (x *explorer) setJobManagerFaults() string {
	name, ok := pickOne(x, x.jobManagers())
	if !ok {
		return ""
	}
	choices := x.jobManagerFaultChoices()
	f := choices[x.rng.IntN(len(choices))]
	if jm := x.jobManager(name); jm != nil {
		jm.SetFaults(f.faults)
	}
	return fmt.Sprintf("JobManager %s: %s", name, f.name)
}

// restartJobManager restarts a JobManager's process: without HA its jobs are lost.
func (x *explorer) restartJobManager() string {
	name, ok := pickOne(x, x.jobManagers())
	if !ok {
		return ""
	}
	jm := x.jobManager(name)
	if jm == nil {
		return ""
	}
	if x.rng.IntN(2) == 0 {
		jm.Crash()
		return "JobManager " + name + " crashed and restarted at once"
	}
	jm.Restart()
	return "JobManager " + name + " restarted"
}

// failAJob fails a running job outright, or its tasks (which the restart strategy restarts).
func (x *explorer) failAJob() string {
	name, ok := pickOne(x, x.jobManagers())
	if !ok {
		return ""
	}
	jm := x.jobManager(name)
	if jm == nil {
		return ""
	}
	var running []string
	for _, j := range jm.Jobs() {
		if j.State == "RUNNING" {
			running = append(running, j.ID)
		}
	}
	id, ok := pickOne(x, running)
	if !ok {
		return ""
	}
	if x.rng.IntN(2) == 0 {
		jm.FailJobNow(id)
		return fmt.Sprintf("job %s on %s FAILED", id, name)
	}
	jm.FailTasksNow(id)
	return fmt.Sprintf("tasks of job %s on %s failed", id, name)
}

// deleteADeployment deletes a JobManager's or TaskManagers' Deployment, as a user or a node loss
// would; the JobManager's jobs go with it.
func (x *explorer) deleteADeployment() string {
	ctx := context.Background()
	deps, err := x.w.kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		x.t.Fatalf("listing Deployments: %v", err)
	}
	var names []string
	for _, d := range deps.Items {
		names = append(names, d.Name)
	}
	sort.Strings(names)
	name, ok := pickOne(x, names)
	if !ok {
		return ""
	}
	if err := x.w.kube.AppsV1().Deployments(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		x.t.Fatalf("deleting Deployment %s: %v", name, err)
	}
	return "Deployment " + name + " deleted"
}

// toggleNotReady makes a TaskManager Deployment report no ready pods while its processes run, or
// ends that for all.
func (x *explorer) toggleNotReady() string {
	if len(x.w.notReady) > 0 {
		x.w.notReady = map[string]bool{}
		return "every TaskManager ready again"
	}
	deps, err := x.w.kube.AppsV1().Deployments(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		x.t.Fatalf("listing Deployments: %v", err)
	}
	var tms []string
	for _, d := range deps.Items {
		if d.Labels[k8.ComponentLabel] == flink.TaskManagerComponent {
			tms = append(tms, d.Name)
		}
	}
	sort.Strings(tms)
	name, ok := pickOne(x, tms)
	if !ok {
		return ""
	}
	x.w.notReady[name] = true
	return "TaskManagers " + name + " not ready"
}

func (x *explorer) toggleSlowAnswers() string {
	if x.slowAnswers > 0 {
		x.slowAnswers = 0
		return "JobManagers answer at once again"
	}
	x.slowAnswers = time.Duration(100+x.rng.IntN(1900)) * time.Millisecond
	return fmt.Sprintf("JobManagers take %s to answer", x.slowAnswers)
}

// armCrash kills the operator at one of its next writes.
func (x *explorer) armCrash() string {
	x.crashIn = 1 + x.rng.IntN(8)
	return fmt.Sprintf("the operator will be killed at its %d. write from now", x.crashIn)
}

func (x *explorer) restartTheOperator() string {
	x.w.restartOperator()
	x.restarts = append(x.restarts, x.w.clock.Now())
	return "the operator restarted between passes"
}

// operatorDown lets Flink and Kubernetes go on for a while with no operator running.
func (x *explorer) operatorDown() string {
	d := time.Duration(10+x.rng.IntN(170)) * time.Second
	x.w.downFor(d)
	x.w.restartOperator()
	x.restarts = append(x.restarts, x.w.clock.Now())
	return fmt.Sprintf("the operator was down for %s", d)
}
