package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// The format of the savepoints the operator takes of a job (spec.savepointFormatType): every one,
// whatever it is for (an upgrade, a suspend, a delete, a teardown, a periodic or a manual one), and
// with or without a cancel, is asked for in that format. The job core sends it as Flink's formatType
// to releases that know it (1.15 and later); older ones take their only format, canonical.

// savepointFormat is spec.savepointFormatType as Flink spells it; "" (Flink's default) for an
// object that owns no job or sets none.
func savepointFormat(rc *Context) string {
	if rc.Settings == nil {
		return ""
	}
	return formatName(rc.Settings.SavepointFormatType)
}

// formatName is a savepoint format as Flink spells it; "" for Flink's default.
func formatName(f v1beta1.SavepointFormatType) string {
	switch f {
	case v1beta1.SavepointFormatCanonical:
		return "CANONICAL"
	case v1beta1.SavepointFormatNative:
		return "NATIVE"
	}
	return ""
}

// requestedFormat is the format the FlinkSnapshot that asked for the entry's savepoint names, as
// Flink spells it; "" when no FlinkSnapshot asked or it names none, and the job's format applies.
func requestedFormat(rc *Context, e *v1beta1.StateEntry) string {
	if e.Snapshot == "" {
		return ""
	}
	for _, s := range rc.Snapshots {
		if s.Name == e.Snapshot && s.Annotations[LedgerEntryAnnotation] == "" {
			return formatName(s.Spec.FormatType)
		}
	}
	return ""
}

// warnOfUnavailableFormat says, with a Warning Event, that the spec asks for native savepoints of a
// Flink release that cannot take them: its savepoints are canonical, and the job runs on as before.
// The caller calls it once per spec generation.
func warnOfUnavailableFormat(rc *Context) {
	if rc.Settings.SavepointFormatType != v1beta1.SavepointFormatNative {
		return
	}
	version := rc.ClusterOwner.Spec.FlinkVersion
	major, minor, ok := client.ParseFlinkVersion(version)
	if !ok || major > 1 || major == 1 && minor >= 15 {
		return
	}
	rc.event(true, "SavepointFormatUnavailable", fmt.Sprintf("%s is Native, which Flink %s cannot take (1.15 and later can); "+
		"its savepoints are taken in its only format, Canonical", rc.Settings.field("savepointFormatType"), version))
}
