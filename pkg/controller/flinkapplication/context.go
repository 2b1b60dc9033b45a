package flinkapplication

import (
	"context"
	"encoding/json"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// Context is everything one reconcile of one application knows: the application (a working copy
// whose status handlers change), the objects it owns, and a view of Flink that asks each question at
// most once per reconcile. Handlers decide from it; they never list or watch on their own.
type Context struct {
	context.Context
	// Meta, Machine, Job and Owned point into the working copy of the object the pass runs for, in
	// its own kind: its metadata, where it stands in the state machine, the job it owns (nil for a
	// FlinkSessionCluster) and the clusters it owns (nil for a FlinkSessionJob). Handlers of any
	// kind read and change these.
	Meta    *metav1.ObjectMeta
	Machine *v1beta1.MachineStatus
	Job     *v1beta1.JobOwnerStatus
	Owned   *v1beta1.ClusterOwnerStatus
	// Settings are the job settings of the object's spec; nil for a kind that owns no job.
	Settings *jobSettings
	// App is the working copy when the object is a FlinkApplication.
	App *v1beta1.FlinkApplication
	// subject is the working copy, stored the object as the pass read it.
	subject, stored subject
	Config          *config.Config
	Now             time.Time
	// Hash is the cluster hash of the current spec.
	Hash string
	// Clusters are the owned Flink clusters, by hash.
	Clusters map[string]*ClusterObjects
	// HAConfigMaps names the ConfigMaps of Flink's Kubernetes HA services that the owned clusters
	// left, by cluster hash (ha_configmaps.go).
	HAConfigMaps map[string][]string
	// Snapshots are the FlinkSnapshots of the object's job (snapshot_objects.go); nil for a kind
	// that owns no job.
	Snapshots []*v1beta1.FlinkSnapshot
	// GenericService is the Service that points at the live cluster, if it exists.
	GenericService *corev1.Service
	// Ingress is the application's Flink UI Ingress, if it exists.
	Ingress *networkingv1.Ingress

	// waitingOn is what the phase waits on, as far as it is known (a pod's problem): said in
	// status.reason while waiting, and the cause given when the deadline passes.
	waitingOn string

	// healthReason says why the live job's health is what observeLiveJob found this pass.
	healthReason string

	// Waiting is set by a handler that waits for something outside the object (task slots, say):
	// a word for the Ready condition's reason.
	Waiting string

	// Overdue is set when the phase's deadline has passed. The handler still runs, so that what
	// Flink completed meanwhile is used, but it starts nothing new: no trigger, no submission.
	Overdue bool
	// deadline is when the phase the pass began in gives up; zero for a phase without one.
	deadline time.Time

	// kind is what differs between the resources the machine runs: their phase table, where they
	// write, and whose cluster their jobs run on.
	kind *objectKind
	// ClusterOwner is the object that owns the clusters in Clusters, as the cluster renderer takes
	// it: the FlinkApplication itself, or the FlinkSessionCluster of a session job or of its own pass.
	ClusterOwner flink.ClusterOwner
	// session is what a session job or cluster knows of its counterpart; nil for a FlinkApplication.
	session *sessionState

	env          *Environment
	jobs         *jobs.Pass
	events       []pendingEvent
	transitioned bool
	// ranOn is set when the pass moved into a phase and ran its handler too (runsAtOnce).
	ranOn bool
	// key is writeKey's answer.
	key string
}

// bind makes working the pass's object and stored the object as read.
func (rc *Context) bind(working, stored subject) {
	rc.subject, rc.stored = working, stored
	rc.Meta, rc.Machine, rc.Job, rc.Owned = working.meta(), working.machine(), working.job(), working.clusters()
}

// ClusterObjects are the Kubernetes objects of one Flink cluster.
type ClusterObjects struct {
	Hash        string
	JobManager  *appsv1.Deployment
	TaskManager *appsv1.Deployment
	Service     *corev1.Service
	// VersionService is the Service named after the cluster's BlueGreen colour, if it has one.
	VersionService *corev1.Service
	// LogConfig is the ConfigMap of the cluster's logging configuration, if it has one.
	LogConfig *corev1.ConfigMap
	// JobManagerPods counts the cluster's JobManager pods, terminating ones included: a JobManager
	// whose Deployment is gone may still run its job until its pod is.
	JobManagerPods int
	// ReadyJobManagerPods and ReadyTaskManagerPods count the cluster's Ready pods that are not
	// terminating.
	ReadyJobManagerPods, ReadyTaskManagerPods int
	// Problem says why a pod of the cluster does not run, as Kubernetes reports it (unschedulable,
	// an image that cannot be pulled, a crash loop); "" when none is known.
	Problem string
	// Progress counts the steps Kubernetes has taken in starting the cluster's pods: one for each
	// pod that exists, is scheduled, runs, and is Ready, terminating and ended pods not counted, and
	// no more for a component than its Deployment's pods can take. A starting cluster's deadline
	// bounds the time it goes without a new step (cluster_progress.go).
	Progress int
	// MostProgress is the most steps its Deployments' pods can take: four each.
	MostProgress int
	// jobManagerSteps and taskManagerSteps are the steps of the cluster's pods of each component,
	// before countSteps caps them.
	jobManagerSteps, taskManagerSteps int
}

// Ready tells whether the cluster's JobManager and all its TaskManagers run: Kubernetes reports its
// Deployments so, or, sooner, its pods are Ready. A Deployment's status follows its pods through the
// ReplicaSet and Deployment controllers, a second or more later on a busy control plane; the pods
// are what the job runs in, and Flink's own slot count is checked before a job is submitted.
func (c *ClusterObjects) Ready() bool {
	if c == nil || c.JobManager == nil || c.TaskManager == nil || c.Service == nil {
		return false
	}
	jm, tm := c.JobManager, c.TaskManager
	deployments := jm.Status.ObservedGeneration >= jm.Generation && jm.Status.AvailableReplicas >= 1 &&
		tm.Status.ObservedGeneration >= tm.Generation && tm.Status.ReadyReplicas >= replicas(tm)
	pods := c.ReadyJobManagerPods >= 1 && c.ReadyTaskManagerPods >= int(replicas(tm))
	return deployments || pods
}

// JobManagerGone tells whether the cluster's JobManager can no longer run anything: its Deployment
// is gone and no JobManager pod is left, terminating ones included. A cluster not found is gone.
func (c *ClusterObjects) JobManagerGone() bool {
	return c == nil || c.JobManager == nil && c.JobManagerPods == 0
}

// replicas is how many pods a Deployment asks for: none when the Deployment is missing (deleted
// under a running job, which the autoscaler's apply path must survive), one when unset.
func replicas(d *appsv1.Deployment) int32 {
	if d == nil {
		return 0
	}
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

type pendingEvent struct {
	warning         bool
	reason, message string
}

func (rc *Context) event(warning bool, reason, message string) {
	rc.events = append(rc.events, pendingEvent{warning, reason, message})
}

// pass is the pass's view of Flink and its job operations (the job core), made on first use: it
// asks each question of a JobManager at most once per pass, and its events are the pass's.
func (rc *Context) pass() *jobs.Pass {
	if rc.jobs == nil {
		rc.jobs = jobs.NewPass(rc, rc.env.Flink, rc.Now, jobs.Clusters{
			URL:            rc.jobManagerAddress,
			JobManagerGone: func(hash string) bool { return rc.Clusters[hash].JobManagerGone() },
			FlinkVersion:   rc.FlinkVersion,
			Refusal: func(hash string) error {
				return rc.env.jobManagerRoute(rc.ClusterOwner, hash, rc.Clusters[hash], rc.Now)
			},
		})
		rc.jobs.Announce = func(e jobs.Event) { rc.event(e.Warning, e.Reason, e.Message) }
		if rc.env.Acting != nil {
			rc.jobs.FenceWith(rc.env.Acting)
		}
	}
	rc.jobs.Overdue = rc.Overdue
	rc.jobs.SavepointFormat = savepointFormat(rc)
	return rc.jobs
}

// mayAct is nil while this replica may change Kubernetes or Flink (Environment.Acting).
func (rc *Context) mayAct() error {
	if rc.env.Acting == nil {
		return nil
	}
	if err := rc.env.Acting(); err != nil {
		return jobs.Retryable("Fence", err)
	}
	return nil
}

// FlinkURL is the REST base URL of the cluster with this hash, as the pass's view of Flink hands
// it out: a call through the pass to a cluster whose Service is refused is not sent
// (jobmanager_routes.go).
func (rc *Context) FlinkURL(hash string) string { return rc.pass().URL(hash) }

// jobManagerAddress is the REST base URL of the cluster with this hash: through its Service.
func (rc *Context) jobManagerAddress(hash string) string {
	o := rc.ClusterOwner
	return rc.env.FlinkURL(o.Namespace, flink.VersionedServiceNameOf(o.Name, hash), o.UIPort())
}

// FlinkVersion is the Flink release the cluster with this hash runs: the flinkVersion of the spec
// its deployment record deployed, so that an update to another release still speaks the old
// release to the old job; else the cluster owner's.
func (rc *Context) FlinkVersion(hash string) string {
	if rc.Job != nil {
		for _, rec := range []*v1beta1.DeploymentRecord{stable(rc.Job), candidate(rc.Job)} {
			if rec == nil || rec.ClusterHash != hash {
				continue
			}
			if v := rc.recordedVersion(hash, rec.Spec); v != "" {
				return v
			}
		}
	}
	return rc.ClusterOwner.Spec.FlinkVersion
}

// recordedVersion is the flinkVersion of the spec of the record of the cluster with hash; "" when
// it has none.
func (rc *Context) recordedVersion(hash, spec string) string {
	if rc.env == nil {
		var decoded struct {
			FlinkVersion string `json:"flinkVersion"`
		}
		_ = json.Unmarshal([]byte(spec), &decoded)
		return decoded.FlinkVersion
	}
	return rc.env.versions.of(rc.writeKey(), hash, spec)
}
