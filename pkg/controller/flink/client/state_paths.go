package client

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/flinkfsm/flinkfsm/pkg/printable"
)

// The paths of savepoints and checkpoints a JobManager answers are stored exact (status, the
// ledger, FlinkSnapshots) and restored from, so they cannot be made safe the way text shown to
// people is: an escaped path, or one cut short, is another path, which a restore would use. A
// JobManager runs the tenant's image and may answer any text for a path. So the client takes a path
// only when it is a plausible one, and refuses the others where answers enter the operator, in one
// place:
//
//   - at most maxStatePath bytes (object stores name keys of up to 1,024 bytes, and Flink's own
//     paths are a directory and a name of about 40 bytes);
//   - no control or format character (what printable.Text would escape: terminal escapes, line
//     breaks, bidirectional overrides);
//   - no U+FFFD, which stands for bytes that were not UTF-8: the path read is not the path written.
//
// A savepoint whose location is refused has failed (SavepointStatus.FailureCause says why); a
// checkpoint's refused path reads "<refused: why>", which, like Flink's own
// "<checkpoint-not-externally-addressable>", is never restored from.
const maxStatePath = 1024

// statePathProblem says why p is no plausible path of a savepoint or checkpoint; "" when it is one.
func statePathProblem(p string) string {
	if len(p) > maxStatePath {
		return fmt.Sprintf("it is %d bytes long, more than the %d a path may have", len(p), maxStatePath)
	}
	if i := strings.IndexFunc(p, func(r rune) bool { return printable.Escaped(r) || r == utf8.RuneError }); i >= 0 {
		r, _ := utf8.DecodeRuneInString(p[i:])
		return fmt.Sprintf("it holds %U at byte %d, which no path has", r, i)
	}
	return ""
}

// refusedPathCause is the failure cause of a savepoint whose location is refused.
func refusedPathCause(location, problem string) string {
	return fmt.Sprintf("Flink answered a location that is no plausible path (%s): %s", problem, pathExcerpt(location))
}

// pathExcerpt is the start of a refused path, printable, for people to find it by.
func pathExcerpt(p string) string {
	const n = 80
	if len(p) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(p[cut]) {
			cut--
		}
		p = p[:cut] + "…"
	}
	return `"` + printable.Text(p) + `"`
}

// checkPaths replaces each path of the statistics that is no plausible path by a refusal, which no
// restore takes for a path.
func (s *CheckpointStats) checkPaths() {
	for _, c := range []*Checkpoint{s.Latest.Completed, s.Latest.Savepoint, s.Latest.Failed} {
		c.checkPath()
	}
	if r := s.Latest.Restored; r != nil {
		r.ExternalPath = checkedPath(r.ExternalPath)
	}
	for i := range s.History {
		s.History[i].checkPath()
	}
}

func (c *Checkpoint) checkPath() {
	if c != nil {
		c.ExternalPath = checkedPath(c.ExternalPath)
	}
}

// checkedPath is p when it is a plausible path (or Flink's own "<…>" for none), its refusal
// otherwise.
func checkedPath(p string) string {
	if problem := statePathProblem(p); problem != "" {
		return "<refused: " + problem + ">"
	}
	return p
}
