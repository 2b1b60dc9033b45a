// Package apifake gives the fake clientsets what the API server does and their object tracker
// does not, for the tests of every package that writes the operator's objects.
package apifake

import (
	"encoding/json"
	"errors"
	"strconv"
	"sync"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	appfake "github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned/fake"
)

// ResourceVersions makes the FlinkApplication fake clientset keep ResourceVersions as the API
// server does, which the plain object tracker does not: every write stores a new resourceVersion,
// an update or merge patch that names a resourceVersion other than the stored one is refused with
// 409 Conflict, a write to the status subresource changes only status and any other write
// everything but status. It can also answer 409 to one chosen write.
type ResourceVersions struct {
	tracker k8stesting.ObjectTracker

	mu   sync.Mutex
	last uint64
	// conflicts counts the writes refused with 409, injected or not.
	conflicts int
	// inject, while set, is asked about each status write that would succeed; the first it
	// accepts is refused with 409 (and changes nothing), and inject is cleared.
	inject func(stored, next *v1beta1.FlinkApplication) bool
	// injected counts the 409s inject caused.
	injected int
}

// EnforceResourceVersions installs ResourceVersions on a FlinkApplication clientset, before its
// first application is created.
func EnforceResourceVersions(apps *appfake.Clientset) *ResourceVersions {
	g := &ResourceVersions{tracker: apps.Tracker(), last: 100}
	apps.PrependReactor("*", "flinkapplications", g.React)
	return g
}

// ConflictOnce makes the first status write for which when holds fail with 409 Conflict.
func (g *ResourceVersions) ConflictOnce(when func(stored, next *v1beta1.FlinkApplication) bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inject = when
}

// Counts are the writes refused with 409, and those of them ConflictOnce caused.
func (g *ResourceVersions) Counts() (conflicts, injected int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.conflicts, g.injected
}

// React is the reactor EnforceResourceVersions installs, for a reactor of a test's own to hand a write on to.
func (g *ResourceVersions) React(a k8stesting.Action) (bool, runtime.Object, error) {
	switch a := a.(type) {
	case k8stesting.CreateActionImpl:
		if a.GetSubresource() != "" {
			return false, nil, nil
		}
		app := a.GetObject().(*v1beta1.FlinkApplication).DeepCopy()
		if app.Namespace == "" {
			app.Namespace = a.GetNamespace()
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		app.ResourceVersion = g.next()
		if err := g.tracker.Create(a.GetResource(), app, a.GetNamespace()); err != nil {
			return true, nil, err
		}
		return true, app.DeepCopy(), nil
	case k8stesting.UpdateActionImpl:
		in := a.GetObject().(*v1beta1.FlinkApplication)
		return g.write(a, in.Name, in.ResourceVersion, func(*v1beta1.FlinkApplication) (*v1beta1.FlinkApplication, error) {
			return in.DeepCopy(), nil
		})
	case k8stesting.PatchActionImpl:
		if a.GetPatchType() != types.MergePatchType {
			return false, nil, nil
		}
		var doc struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(a.GetPatch(), &doc); err != nil {
			return true, nil, apierrors.NewBadRequest(err.Error())
		}
		return g.write(a, a.GetName(), doc.Metadata.ResourceVersion, func(stored *v1beta1.FlinkApplication) (*v1beta1.FlinkApplication, error) {
			old, err := json.Marshal(stored)
			if err != nil {
				return nil, err
			}
			merged, err := jsonpatch.MergePatch(old, a.GetPatch())
			if err != nil {
				return nil, apierrors.NewBadRequest(err.Error())
			}
			next := &v1beta1.FlinkApplication{}
			return next, json.Unmarshal(merged, next)
		})
	}
	return false, nil, nil
}

// write stores what change makes of the stored object, if rv (when given) is the stored one.
func (g *ResourceVersions) write(a k8stesting.Action, name, rv string,
	change func(*v1beta1.FlinkApplication) (*v1beta1.FlinkApplication, error)) (bool, runtime.Object, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	obj, err := g.tracker.Get(a.GetResource(), a.GetNamespace(), name)
	if err != nil {
		return true, nil, err
	}
	stored := obj.(*v1beta1.FlinkApplication)
	conflict := apierrors.NewConflict(a.GetResource().GroupResource(), name,
		errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	if rv != "" && rv != stored.ResourceVersion {
		g.conflicts++
		return true, nil, conflict
	}
	next, err := change(stored.DeepCopy())
	if err != nil {
		return true, nil, err
	}
	if a.GetSubresource() == "status" {
		s := stored.DeepCopy()
		s.Status = next.Status
		next = s
	} else {
		next.Status = *stored.Status.DeepCopy()
	}
	if g.inject != nil && a.GetSubresource() == "status" && g.inject(stored, next) {
		g.inject = nil
		g.conflicts++
		g.injected++
		return true, nil, conflict
	}
	next.Namespace, next.Name, next.UID = stored.Namespace, stored.Name, stored.UID
	next.ResourceVersion = g.next()
	if err := g.tracker.Update(a.GetResource(), next, a.GetNamespace()); err != nil {
		return true, nil, err
	}
	return true, next.DeepCopy(), nil
}

func (g *ResourceVersions) next() string {
	g.last++
	return strconv.FormatUint(g.last, 10)
}
