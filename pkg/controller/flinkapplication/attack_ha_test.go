package flinkapplication

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// Attacks on the HA clean-up with what a JobManager writes.

// A JobManager (the tenant's image) writes Flink's HA ConfigMaps, with any names, as many as the
// namespace lets it. docs/security.md: text from a JobManager reaches Events as one printable line
// of at most 600 bytes. The Event that reports the HA ConfigMaps the clean-up removed must stay
// within that bound, however many ConfigMaps the JobManager left and however long their names.
func TestTheHACleanUpsEventIsBoundedWhateverTheJobManagerWrote(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", withKubernetesHA)
	id := flink.HAClusterIDOf("wc", old.Status.DeployHash)
	const left = 300
	for i := range left {
		w.writeHAConfigMap(id, fmt.Sprintf("%s-%s-%03d-config-map", id, strings.Repeat("x", 200), i))
	}
	w.events()
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	w.runUntil("wc", "upgraded", upgradedFrom(old))
	var events []string
	w.runUntil("wc", "the old cluster's HA ConfigMaps removed", func(*v1beta1.FlinkApplication) bool {
		events = append(events, w.events()...)
		return len(w.haConfigMaps()) == 1
	})
	longest := ""
	for _, e := range events {
		if strings.Contains(e, "HAConfigMapsRemoved") && len(e) > len(longest) {
			longest = e
		}
	}
	assert.NotEmpty(t, longest, "the clean-up says what it removed")
	assert.LessOrEqual(t, len(longest), 1024, "bytes of the Event: %.300s…", longest)
}
