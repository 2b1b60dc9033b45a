package fsm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOurOwnWriteMakesOlderCachesStaleAndItsEchoQuiet(t *testing.T) {
	var w OwnWrites
	at := func(rv string, labels map[string]string) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{Name: "wc", ResourceVersion: rv, Labels: labels}
	}
	assert.False(t, w.Stale("k", at("5", nil)), "nothing written yet")

	end := w.Begin("k")
	assert.True(t, w.Echo("k", at("5", nil), at("6", nil)), "a write on the wire: its echo may come before its answer")
	w.Wrote("k", "6")
	end()
	assert.True(t, w.Stale("k", at("5", nil)))
	assert.False(t, w.Stale("k", at("6", nil)))
	assert.True(t, w.Echo("k", at("5", nil), at("6", nil)))
	assert.False(t, w.Echo("k", at("5", nil), at("7", nil)), "someone else's write")
	assert.False(t, w.Echo("k", at("5", nil), at("6", map[string]string{"a": "b"})), "labels changed with it")

	w.Forget("k")
	assert.False(t, w.Stale("k", at("5", nil)))
}
