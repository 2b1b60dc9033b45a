package flinkapplication

import (
	"context"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// The world as one shard's operator sees it: its observers read what the selector selects, as the
// informers of a sharded operator cache it, and return the rest as not found.

// shardAs makes the world's operator the one of the shard the selector selects.
func (w *world) shardAs(selector string) {
	sel, err := labels.Parse(selector)
	require.NoError(w.t, err)
	w.env.Shard = sel
	w.env.Observer = shardObserver{Observer: &clientObserver{w: w}, sel: sel}
	if w.env.Sessions != nil {
		w.env.Sessions = shardSessions{SessionObserver: &clientObserver{w: w}, sel: sel}
	}
}

type shardObserver struct {
	Observer
	sel labels.Selector
}

func (o shardObserver) Application(namespace, name string) (*v1beta1.FlinkApplication, error) {
	a, err := o.Observer.Application(namespace, name)
	if err == nil && !o.sel.Matches(labels.Set(a.Labels)) {
		return nil, apierrors.NewNotFound(v1beta1.Resource("flinkapplications"), name)
	}
	return a, err
}

func (o shardObserver) ApplicationsIn(namespace string) ([]*v1beta1.FlinkApplication, error) {
	all, err := o.Observer.ApplicationsIn(namespace)
	return selected(o.sel, all), err
}

type shardSessions struct {
	SessionObserver
	sel labels.Selector
}

func (o shardSessions) SessionCluster(namespace, name string) (*v1beta1.FlinkSessionCluster, error) {
	c, err := o.SessionObserver.SessionCluster(namespace, name)
	if err == nil && !o.sel.Matches(labels.Set(c.Labels)) {
		return nil, apierrors.NewNotFound(v1beta1.Resource("flinksessionclusters"), name)
	}
	return c, err
}

func (o shardSessions) SessionJob(namespace, name string) (*v1beta1.FlinkSessionJob, error) {
	j, err := o.SessionObserver.SessionJob(namespace, name)
	if err == nil && !o.sel.Matches(labels.Set(j.Labels)) {
		return nil, apierrors.NewNotFound(v1beta1.Resource("flinksessionjobs"), name)
	}
	return j, err
}

func (o shardSessions) SessionJobsOf(namespace, cluster string) ([]*v1beta1.FlinkSessionJob, error) {
	all, err := o.SessionObserver.SessionJobsOf(namespace, cluster)
	return selected(o.sel, all), err
}

func (o shardSessions) SessionJobsIn(namespace string) ([]*v1beta1.FlinkSessionJob, error) {
	all, err := o.SessionObserver.SessionJobsIn(namespace)
	return selected(o.sel, all), err
}

func (o shardSessions) SessionClustersIn(namespace string) ([]*v1beta1.FlinkSessionCluster, error) {
	all, err := o.SessionObserver.SessionClustersIn(namespace)
	return selected(o.sel, all), err
}

func selected[T metav1.Object](sel labels.Selector, all []T) []T {
	var out []T
	for _, o := range all {
		if sel.Matches(labels.Set(o.GetLabels())) {
			out = append(out, o)
		}
	}
	return out
}

// relabel sets one label of an object of the world, as `kubectl label --overwrite` would.
func (w *world) relabel(kind, name, key, value string) {
	ctx := context.Background()
	c := w.apps.FlinkV1beta1()
	var err error
	switch kind {
	case applicationKindName:
		var a *v1beta1.FlinkApplication
		if a, err = c.FlinkApplications(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			metav1.SetMetaDataLabel(&a.ObjectMeta, key, value)
			_, err = c.FlinkApplications(ns).Update(ctx, a, metav1.UpdateOptions{})
		}
	case sessionJobKindName:
		var j *v1beta1.FlinkSessionJob
		if j, err = c.FlinkSessionJobs(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			metav1.SetMetaDataLabel(&j.ObjectMeta, key, value)
			_, err = c.FlinkSessionJobs(ns).Update(ctx, j, metav1.UpdateOptions{})
		}
	case sessionClusterKindName:
		var s *v1beta1.FlinkSessionCluster
		if s, err = c.FlinkSessionClusters(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			metav1.SetMetaDataLabel(&s.ObjectMeta, key, value)
			_, err = c.FlinkSessionClusters(ns).Update(ctx, s, metav1.UpdateOptions{})
		}
	}
	require.NoError(w.t, err)
}

// writes are the requests that changed something, on both clientsets, since the last clearActions.
func (w *world) writes() []string {
	var out []string
	for _, a := range append(w.kube.Actions(), w.apps.Actions()...) {
		switch a.GetVerb() {
		case "get", "list", "watch":
			continue
		}
		what := a.GetVerb() + " " + a.GetResource().Resource
		if s := a.GetSubresource(); s != "" {
			what += "/" + s
		}
		if n, ok := a.(interface{ GetName() string }); ok {
			what += " " + n.GetName()
		}
		out = append(out, what)
	}
	return out
}

func (w *world) clearActions() {
	w.kube.ClearActions()
	w.apps.ClearActions()
}
