package flinkapplication

import (
	"flag"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// Flink's Kubernetes HA in the explorer. In a run with HA (haWorld) each application and the
// session cluster start with high-availability.type kubernetes or without, drawn as they are
// created, and users turn it on and off (an update: the spec's hash, and so the cluster id, change).
// A JobManager that restarts, or whose Deployment is deleted and created again, then recovers its
// jobs from the HA store under their own ids (integ/flinksim/ha.go), unless the cluster's HA
// ConfigMaps were deleted before it started (world.settle, as a Fleet does).
//
// The invariants HA adds, checked with the others:
//  6. no HA ConfigMap the operator deletes is that of a cluster whose HA store would recover a job
//     of an object deleted with deleteMode None (which leaves Flink's state alone), or of a live
//     object other than the one whose pass deletes it (HA data is its cluster's owner's, by uid: an
//     object created again under the same name is another; the session cluster is the owner of its
//     session jobs' HA data, and moves them across before it lets its old cluster go);
//  7. no job of an application comes back to life after the application is gone: its clusters went
//     with it, so a JobManager that recovers it runs a namesake's cluster under the same cluster id.
//     (A session job deleted with deleteMode None leaves its job on the session cluster, whose
//     JobManager recovers it as any other of its jobs.)
//
// Invariant 1 counts a job alive only while it runs (its spans): under HA a job is suspended while
// no JobManager runs it, and the same job, under the same id, goes on once one recovers it. That is
// no replacement of it either, so invariant 2 checks a job's restore once, at its submission: a
// recovery restores what HA kept, the job's newest completed checkpoint.

var explorerHA = flag.String("explorer.ha", "", "Flink HA in the explorer's runs: on, off, or empty: by seed (odd seeds run with it)")

// haWorld tells whether the run of a seed has Flink HA.
func haWorld(seed uint64) bool {
	switch *explorerHA {
	case "on":
		return true
	case "off":
		return false
	}
	return seed%2 == 1
}

// haFlag is the -explorer.ha that replays the run.
func (x *explorer) haFlag() string {
	if x.ha {
		return "on"
	}
	return "off"
}

// userActions are the actions users take in this run: a run with HA turns it on and off too.
func (x *explorer) userActions() []userAction {
	if !x.ha {
		return userActions
	}
	return append(append([]userAction(nil), userActions...), userAction{"HA on or off", 3, (*explorer).toggleHA})
}

// setKubernetesHA turns Flink's Kubernetes HA on or off in a flinkConfig.
func setKubernetesHA(cfg v1beta1.FlinkConfig, on bool) {
	if on {
		cfg["high-availability.type"] = "kubernetes"
		cfg["high-availability.storageDir"] = "file:///checkpoints/ha"
		return
	}
	delete(cfg, "high-availability.type")
	delete(cfg, "high-availability.storageDir")
}

// toggleHA turns Flink HA on or off for an application.
func (x *explorer) toggleHA() string {
	id := x.jobOwner()
	if id == nil || id.kind != applicationKindName {
		return ""
	}
	on := !flink.HighAvailability(x.w.get(id.name))
	x.edit(id, func(s *v1beta1.FlinkApplicationSpec) { setKubernetesHA(s.FlinkConfig, on) }, nil)
	return fmt.Sprintf("%s Flink HA %v", id.name, onOff(on))
}

// toggleSessionClusterHA turns Flink HA on or off for the session cluster.
func (x *explorer) toggleSessionClusterHA() string {
	on := !flink.ConfigHasHighAvailability(x.w.sessionCluster(sessionClusterName).Spec.FlinkConfig)
	x.w.updateSessionCluster(sessionClusterName, func(c *v1beta1.FlinkSessionCluster) { setKubernetesHA(c.Spec.FlinkConfig, on) })
	return "session cluster Flink HA " + onOff(on)
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// watchHAConfigMapDeletes checks invariant 6 at each deletion of an HA ConfigMap by the operator,
// before it happens.
func (x *explorer) watchHAConfigMapDeletes() {
	gvr := corev1.SchemeGroupVersion.WithResource("configmaps")
	x.w.kube.PrependReactor("delete", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if !x.operatorActive || x.killed {
			return false, nil, nil
		}
		d := a.(k8stesting.DeleteAction)
		// The clientset holds its lock while reactors run: read its tracker.
		obj, err := x.w.kube.Tracker().Get(gvr, d.GetNamespace(), d.GetName())
		if err != nil {
			return false, nil, nil
		}
		cm := obj.(*corev1.ConfigMap)
		if cm.Labels[flink.FlinkObjectLabel] == flink.FlinkObject && cm.Labels[flink.HAClusterIDLabel] != "" {
			x.checkHAConfigMapDelete(cm.Name, cm.Labels[flink.HAClusterIDLabel])
		}
		return false, nil, nil
	})
}

// checkHAConfigMapDelete is invariant 6 for the deletion of the HA ConfigMap name of cluster id.
func (x *explorer) checkHAConfigMapDelete(name, clusterID string) {
	by := "a pass of an orphaned FlinkSnapshot"
	if x.passing != nil {
		by = "a pass of " + x.passing.String()
	}
	for _, jobID := range x.w.storage.HAJobIDs("", clusterID) {
		p := x.identityOfJob(jobID)
		switch {
		case p == nil:
		case p.deleting && p.deleteMode == v1beta1.DeleteModeNone:
			x.violate("%s deleted HA ConfigMap %s of cluster %s, from which Flink HA would recover job %s of %s, deleted with "+
				"deleteMode None, which leaves Flink's state alone", by, name, clusterID, jobID, p)
		case !p.deleting && !p.gone && p != x.passing && !x.sessionClusterOf(p):
			x.violate("%s deleted HA ConfigMap %s of cluster %s, from which Flink HA would recover job %s of %s, another object",
				by, name, clusterID, jobID, p)
		}
	}
}

// sessionClusterOf tells whether the object whose pass runs is the session cluster the session job
// p runs on.
func (x *explorer) sessionClusterOf(p *identity) bool {
	return p.kind == sessionJobKindName && x.passing != nil && x.passing.kind == sessionClusterKindName
}

// checkHA runs invariant 7 after each step.
func (x *explorer) checkHA() {
	for _, id := range x.identities {
		if !id.gone || id.kind != applicationKindName {
			continue
		}
		for _, j := range x.jobsOf(id) {
			for _, s := range j.AliveSpans() {
				if s.From.After(id.goneAt) && !x.leftAlone(id, s.From) {
					x.violate("job %s of %s, gone since %s, came back to life at %s on JobManager %s: a cluster of a namesake recovered it",
						j.JobID, id, id.goneAt.Format("15:04:05.0"), s.From.Format("15:04:05.0"), j.JobManager)
				}
			}
		}
	}
}

// haJobManagerFaults are the faults only a run with HA gives JobManagers: the main() of an
// application HA runs again takes a while to find its job (flinksim.Faults.RerunTakes), meanwhile the
// application is RUNNING and lists no job. Running each recovered job under a new id
// (flinksim.Faults.RerunUnderNewJobID) is not among them: real Flink 2.3 recovers a job under its own
// id (integ/realflink, TestASessionJobIsRecoveredUnderItsOwnIDWhenItsJobManagerIsKilledUnderHA), and
// the unit world keeps the operator following such a job (flink23_test.go). The menu keeps its
// length, so that a seed draws the same choices as before.
var haJobManagerFaults = []jobManagerFault{
	{"applications HA runs again take 5 s to find their jobs", flinksim.Faults{RerunTakes: 5 * time.Second}},
	{"applications HA runs again take 20 s to find their jobs", flinksim.Faults{RerunTakes: 20 * time.Second}},
}

// jobManagerFaultChoices are the faults a JobManager may be given in this run.
func (x *explorer) jobManagerFaultChoices() []jobManagerFault {
	if !x.ha {
		return jobManagerFaults
	}
	return append(append([]jobManagerFault(nil), jobManagerFaults...), haJobManagerFaults...)
}

// firstJobID is the id a job was first submitted under: a job HA ran again under a new id
// (JobRecord.RerunOf) is the job it was, and its object's.
func firstJobID(records []flinksim.JobRecord, r flinksim.JobRecord) string {
	id := r.JobID
	for hops := 0; hops < len(records); hops++ {
		next := ""
		if hops == 0 {
			next = r.RerunOf
		} else {
			for _, o := range records {
				if o.JobID == id && o.RerunOf != "" {
					next = o.RerunOf
				}
			}
		}
		if next == "" {
			break
		}
		id = next
	}
	return id
}

// firstIDOf is the id the job of this id was first submitted under, in any of the run's clusters.
func (x *explorer) firstIDOf(jobID string) string {
	if !x.ha {
		return jobID
	}
	seen := map[string]bool{}
	for _, id := range x.identities {
		key := id.timelineKey()
		if seen[key] {
			continue
		}
		seen[key] = true
		records := x.w.timeline.Jobs(key)
		for _, r := range records {
			if r.JobID == jobID {
				return firstJobID(records, r)
			}
		}
	}
	return jobID
}

// leftAlone tells whether a job of the gone application id that runs again at t may be Flink HA's
// recovery on a cluster the application left running: deleteMode None leaves Flink alone, and a
// JobManager of such a cluster that restarts recovers the job (explorer seed 17001851). Only
// before a namesake was created: a cluster of the same name may then be the namesake's.
func (x *explorer) leftAlone(id *identity, t time.Time) bool {
	if id.deleteMode != v1beta1.DeleteModeNone {
		return false
	}
	for _, o := range x.identities {
		if o != id && o.kind == id.kind && o.name == id.name && !o.createdAt.After(t) && o.createdAt.After(id.createdAt) {
			return false
		}
	}
	return true
}
