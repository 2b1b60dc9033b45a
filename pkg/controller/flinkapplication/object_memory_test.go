package flinkapplication

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// A remembered hash is the hash of the object as read: a change to the spec comes with a new
// resourceVersion, and so does a new object of the same name with a new uid.
func TestClusterHashesFollowTheObject(t *testing.T) {
	var c clusterHashes
	app := wordcount("a")
	app.UID, app.ResourceVersion = "u1", "10"
	assert.Equal(t, flink.ClusterHash(app), c.of("k", app))
	assert.Equal(t, 0, int(testing.AllocsPerRun(10, func() { c.of("k", app) })), "a known object is not hashed again")

	changed := app.DeepCopy()
	changed.Spec.Image = "other:v2"
	changed.ResourceVersion = "11"
	assert.Equal(t, flink.ClusterHash(changed), c.of("k", changed))
	assert.NotEqual(t, flink.ClusterHash(app), c.of("k", changed))

	recreated := app.DeepCopy()
	recreated.UID, recreated.Spec.Image = "u2", "third:v3"
	assert.Equal(t, flink.ClusterHash(recreated), c.of("k", recreated), "same resourceVersion, another object")

	unread := app.DeepCopy()
	unread.ResourceVersion, unread.Spec.Image = "", "fourth:v4"
	assert.Equal(t, flink.ClusterHash(unread), c.of("k", unread))

	c.forget("k")
	assert.Empty(t, c.m)
}
