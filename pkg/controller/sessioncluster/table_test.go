package sessioncluster

import (
	"reflect"
	"testing"

	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// A session cluster owns no job: its answers to the shared job phases (pass.go) are those of an
// object with no job, so none of those phases may be a row of its table. Deleting, above all, is
// its own: it waits for the session jobs that name the cluster.
func TestASessionClusterRunsNoSharedJobPhase(t *testing.T) {
	shared := lifecycle.StopPhases(func(*Pass) *lifecycle.Pass { return nil }, nil, nil)
	for phase := range shared {
		if _, ok := table[phase]; ok {
			t.Errorf("phase %s of the session cluster's table is one of the shared job phases", phase)
		}
	}
	deleting := reflect.ValueOf(table[fsm.PhaseDeleting].Handle).Pointer()
	if deleting != reflect.ValueOf(handleDeleting).Pointer() {
		t.Error("the session cluster's Deleting is not its own handler")
	}
}
