package operator

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	appfake "github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned/fake"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

func appKey(name string) queueKey {
	return queueKey{Kind: v1beta1.FlinkApplicationKind, ObjectName: cache.ObjectName{Namespace: ns, Name: name}}
}

// The controller's own queue: with a fleet's polls waiting, a new application's first pass comes
// first, as soon as its informer sees it.
func TestACreateIsNotQueuedBehindTheFleetsPolls(t *testing.T) {
	var objs []runtime.Object
	var fleet []queueKey
	for i := range 30 {
		app := restingApp(fmt.Sprintf("running-%02d", i))
		objs = append(objs, app)
		fleet = append(fleet, appKey(app.Name))
	}
	apps := appfake.NewSimpleClientset(objs...)
	c := queueOnlyController(t, apps, clock.RealClock{}, config.Default())
	ctx := context.Background()
	// Whatever the start queued, then every poll of the fleet due at once.
	for c.queue.Len() > 0 {
		key, _ := c.queue.Get()
		c.queue.Done(key)
	}
	for _, key := range fleet {
		c.queue.Add(key)
	}

	_, err := apps.FlinkV1beta1().FlinkApplications(ns).Create(ctx, appNamed("created"), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return c.queue.Len() == len(fleet)+1 }, 10*time.Second, 5*time.Millisecond,
		"the informer queues the new application")
	key, _ := c.queue.Get()
	assert.Equal(t, "created", key.Name, "taken before the %d polls that were queued first", len(fleet))
}
