package jobstate

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// The format of the savepoints the operator takes of a job (spec.savepointFormatType): every one,
// whatever it is for (an upgrade, a suspend, a delete, a teardown, a periodic or a manual one), and
// with or without a cancel, is asked for in that format. The job core sends it as Flink's formatType
// to releases that know it (1.15 and later); older ones take their only format, canonical.

// SavepointFormat is the format of the savepoints the operator takes of the job, as Flink spells
// it; "" (Flink's default) for settings that set none, or for no settings (an object that owns no
// job).
func (s *Settings) SavepointFormat() string {
	if s == nil {
		return ""
	}
	return FormatName(s.SavepointFormatType)
}

// FormatName is a savepoint format as Flink spells it; "" for Flink's default.
func FormatName(f v1beta1.SavepointFormatType) string {
	switch f {
	case v1beta1.SavepointFormatCanonical:
		return "CANONICAL"
	case v1beta1.SavepointFormatNative:
		return "NATIVE"
	}
	return ""
}

// UnavailableFormat says why the Flink release version cannot take savepoints in the format the
// settings ask for (native savepoints before 1.15): its savepoints are canonical, and the job runs
// on as before. "" when it can.
func (s *Settings) UnavailableFormat(version string) string {
	if s.SavepointFormatType != v1beta1.SavepointFormatNative {
		return ""
	}
	major, minor, ok := client.ParseFlinkVersion(version)
	if !ok || major > 1 || major == 1 && minor >= 15 {
		return ""
	}
	return fmt.Sprintf("%s is Native, which Flink %s cannot take (1.15 and later can); "+
		"its savepoints are taken in its only format, Canonical", s.Field("savepointFormatType"), version)
}
