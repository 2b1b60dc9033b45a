package testkit

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Describe is what a failure message needs to know about an application.
func Describe(app *v1beta1.FlinkApplication) string {
	st := app.Status
	var b strings.Builder
	fmt.Fprintf(&b, "phase %q, reason %q, deployHash %q, updatingHash %q, job %s (%s)",
		st.Phase, st.Reason, st.DeployHash, st.UpdatingHash, st.JobStatus.JobID, st.JobStatus.State)
	if p := st.JobStatus.RestorePath; p != "" {
		fmt.Fprintf(&b, ", restorePath %q", p)
	}
	if p := st.SavepointPath; p != "" {
		fmt.Fprintf(&b, ", savepointPath %q", p)
	}
	if e := st.LastSeenError; e != nil {
		fmt.Fprintf(&b, ", lastSeenError %q (retry %d)", e.AppError, st.RetryCount)
	}
	b.WriteString(", history:")
	for _, h := range st.History {
		fmt.Fprintf(&b, "\n    %s %s -> %s (%s)", h.Time.Format("15:04:05"), h.From, h.To, h.Reason)
	}
	return b.String()
}

// HistoryHas tells whether the application passed through phase, as status.history records it.
func HistoryHas(app *v1beta1.FlinkApplication, phase v1beta1.FlinkApplicationPhase) bool {
	for _, h := range app.Status.History {
		if h.To == phase {
			return true
		}
	}
	return false
}

var notNameChars = regexp.MustCompile(`[^a-z0-9]+`)

// NamespacePrefix turns a test name into the generateName of its namespace, after prefix (which
// tells the suites' namespaces apart): a DNS label once the API server appends its five random
// characters.
func NamespacePrefix(prefix, testName string) string {
	n := strings.TrimPrefix(testName, "Test")
	n = strings.Trim(notNameChars.ReplaceAllString(strings.ToLower(n), "-"), "-")
	if len(n) > 50 {
		n = strings.TrimRight(n[:50], "-")
	}
	return prefix + n + "-"
}

// LinesAbout is the last n lines of a log that mention text.
func LinesAbout(log, text string, n int) string {
	var mine []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, text) {
			mine = append(mine, line)
		}
	}
	return Tail(strings.Join(mine, "\n"), n)
}

// Tail is the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ReadFile is a file's text, empty when it cannot be read: for reports, which print what there is.
func ReadFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
