package flinkapplication

import (
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/snapshots"
)

// requestedFormat is the format the FlinkSnapshot that asked for the entry's savepoint names, as
// Flink spells it; "" when no FlinkSnapshot asked or it names none, and the job's format applies.
func requestedFormat(rc *Context, e *v1beta1.StateEntry) string {
	if e.Snapshot == "" {
		return ""
	}
	for _, s := range rc.Snapshots {
		if s.Name == e.Snapshot && s.Annotations[snapshots.LedgerEntryAnnotation] == "" {
			return jobstate.FormatName(s.Spec.FormatType)
		}
	}
	return ""
}

// warnOfUnavailableFormat says, with a Warning Event, that the spec asks for native savepoints of a
// Flink release that cannot take them. The caller calls it once per spec generation.
func warnOfUnavailableFormat(rc *Context) {
	if why := rc.Settings.UnavailableFormat(rc.ClusterOwner.Spec.FlinkVersion); why != "" {
		rc.event(true, "SavepointFormatUnavailable", why)
	}
}
