package client

import (
	"fmt"
	"strconv"
	"strings"
)

// What the operator sends depends on the Flink release it talks to, because Flink before 1.20
// refuses a request property it does not know (400, "Request did not match expected format") and
// 1.20 and later ignore one without a word (FLINK-35302). The release is the cluster's owner's
// spec.flinkVersion, passed with each request as a value; empty means a current release.

// ParseFlinkVersion reads the major and minor version from strings like "1.20", "1.11.3", "v1.8" or
// "2.0-SNAPSHOT". A lone major version ("2") reads as minor 0.
func ParseFlinkVersion(s string) (major, minor int, ok bool) {
	s = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "v"), "V")
	parts := strings.SplitN(s, ".", 3)
	major, ok = leadingNumber(parts[0], len(parts) == 1)
	if !ok {
		return 0, 0, false
	}
	if len(parts) == 1 {
		return major, 0, true
	}
	minor, ok = leadingNumber(parts[1], true)
	if !ok {
		return 0, 0, false
	}
	return major, minor, true
}

// leadingNumber parses the digits that s starts with. Unless suffixOK, s must be only digits.
func leadingNumber(s string, suffixOK bool) (int, bool) {
	end := 0
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == 0 || (!suffixOK && end != len(s)) {
		return 0, false
	}
	if end < len(s) && s[end] != '-' && s[end] != '+' {
		return 0, false
	}
	n, err := strconv.Atoi(s[:end])
	return n, err == nil
}

// flinkAtLeast tells whether a Flink version is major.minor or newer. An empty or unreadable
// version counts as a current release: the request is then what Flink takes today.
func flinkAtLeast(version string, major, minor int) bool {
	ma, mi, ok := ParseFlinkVersion(version)
	return !ok || ma > major || (ma == major && mi >= minor)
}

// HasResourceRequirements tells whether a Flink release serves /jobs/:jobid/resource-requirements,
// through which the adaptive scheduler rescales a running job in place: 1.18 and later do.
func HasResourceRequirements(version string) bool { return flinkAtLeast(version, 1, 18) }

// HasParallelismOverrides tells whether a job can be submitted with a parallelism per vertex
// (pipeline.jobvertex-parallelism-overrides in the run request's flinkConfiguration, 1.17+).
func HasParallelismOverrides(version string) bool { return flinkAtLeast(version, 1, 17) }

// ParallelismOverridesKey is the Flink option that sets a parallelism per job vertex at submission.
const ParallelismOverridesKey = "pipeline.jobvertex-parallelism-overrides"

// forRelease is the savepoint request as the release takes it: trigger ids and the format came with
// Flink 1.15, and an older release refuses a request that names them. Without a trigger id Flink
// picks its own, which the caller then follows.
func (r SavepointRequest) forRelease() SavepointRequest {
	if !flinkAtLeast(r.FlinkVersion, 1, 15) {
		r.TriggerID, r.FormatType = "", ""
	}
	return r
}

// forRelease is the submission as the release takes it, or why it cannot take it: Flink 2.x has no
// programArgs (it would run the job without its arguments), claimMode is 1.20's name for
// restoreMode (which 1.15 to 1.19 know, and 1.20 deprecates), and flinkConfiguration came with
// 1.17.
func (r SubmitJobRequest) forRelease() (SubmitJobRequest, error) {
	v := r.FlinkVersion
	switch {
	case r.ProgramArgs != "" && flinkAtLeast(v, 2, 0):
		return r, fmt.Errorf("flink %s has no programArgs: send the arguments as programArgsList", v)
	case len(r.FlinkConfiguration) > 0 && !flinkAtLeast(v, 1, 17):
		return r, fmt.Errorf("flink %s takes no flinkConfiguration with a submission (1.17 and later do)", v)
	}
	mode := r.ClaimMode
	if mode == "" {
		mode = r.RestoreMode
	}
	r.ClaimMode, r.RestoreMode = "", ""
	switch {
	case mode == "":
	case flinkAtLeast(v, 1, 20):
		r.ClaimMode = mode
	case flinkAtLeast(v, 1, 15):
		r.RestoreMode = mode
	default:
		return r, fmt.Errorf("flink %s has no restore mode (1.15 and later do)", v)
	}
	return r, nil
}
