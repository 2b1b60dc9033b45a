package fsm

import (
	"encoding/json"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// StatusPatch is the merge patch from one status to another, nil when they serialise the same.
func StatusPatch(before, after interface{}) ([]byte, error) {
	oldJSON, err := json.Marshal(map[string]interface{}{"status": before})
	if err != nil {
		return nil, err
	}
	newJSON, err := json.Marshal(map[string]interface{}{"status": after})
	if err != nil {
		return nil, err
	}
	patch, err := jsonpatch.CreateMergePatch(oldJSON, newJSON)
	if err != nil || string(patch) == "{}" {
		return nil, err
	}
	return patch, nil
}

// SetCondition sets a condition of the status, keeping its lastTransitionTime while its status stays.
func SetCondition(st *v1beta1.MachineStatus, c metav1.Condition, now time.Time) {
	if old := meta.FindStatusCondition(st.Conditions, c.Type); old != nil && old.Status == c.Status {
		c.LastTransitionTime = old.LastTransitionTime
	} else {
		c.LastTransitionTime = metav1.NewTime(now)
	}
	meta.SetStatusCondition(&st.Conditions, c)
}

// WritePatch is the merge patch of the pass's one status write, guarded by the resourceVersion
// the pass read, so that a write based on an out-of-date view fails instead of overwriting newer
// intent; nil when nothing a reader sees changed. When there is something to write it stamps
// lastUpdatedAt in the working status.
func (p *Pass) WritePatch() ([]byte, error) {
	before, after := p.Stored.Status(), p.Subject.Status()
	// Compared as the API server stores them: times in whole seconds. Flink's millisecond times
	// differ from the stored ones on every pass without anything a reader could see.
	if SameStatus(before, after) {
		return nil, nil
	}
	if patch, err := StatusPatch(before, after); err != nil || patch == nil {
		return nil, err
	}
	t := metav1.NewTime(p.Now)
	p.Machine.LastUpdatedAt = &t
	patch, err := StatusPatch(before, after)
	if err != nil {
		return nil, err
	}
	var doc map[string]interface{}
	_ = json.Unmarshal(patch, &doc)
	doc["metadata"] = map[string]interface{}{"resourceVersion": p.Meta.ResourceVersion}
	return json.Marshal(doc)
}
