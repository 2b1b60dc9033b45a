package realflink

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// An exchange is one answer as the differential test compares it: what was asked, the status, and
// the body's shape (field names and JSON types, recursively), keeping only the values that mean
// something to the operator: enum-like strings (job states, operation status ids, checkpoint
// types) and the exception classes and phrases an error names. Ids, times, sizes and counts differ
// between any two runs and are left out.
type exchange struct {
	Request string `json:"request"`
	Status  int    `json:"status"`
	Body    any    `json:"body,omitempty"`
}

// A step is one call of the scenario, and the last answer to each request it made (a poll keeps
// its final answer).
type step struct {
	Name      string     `json:"name"`
	Exchanges []exchange `json:"exchanges"`
}

type recording struct {
	Release string `json:"release"`
	Steps   []step `json:"steps"`
}

// recorder is the client's transport: it keeps every answer under the step being run.
type recorder struct {
	next  http.RoundTripper
	jarID string
	mu    sync.Mutex
	cur   string
	rec   recording
}

func (r *recorder) begin(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cur = name
	r.rec.Steps = append(r.rec.Steps, step{Name: name})
}

// forget drops the current step: what it asked depended on timing (an operation already over).
func (r *recorder) forget() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rec.Steps = r.rec.Steps[:len(r.rec.Steps)-1]
	r.cur = ""
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	data, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	if rerr != nil {
		return resp, nil
	}
	var body any
	if len(data) > 0 && json.Unmarshal(data, &body) != nil {
		body = "<not JSON>"
	}
	ex := exchange{Request: req.Method + " " + templatePath(req.URL.Path), Status: resp.StatusCode, Body: shapeOf(body)}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == "" || len(r.rec.Steps) == 0 {
		return resp, nil
	}
	s := &r.rec.Steps[len(r.rec.Steps)-1]
	for i := range s.Exchanges {
		if s.Exchanges[i].Request == ex.Request {
			s.Exchanges[i] = ex
			return resp, nil
		}
	}
	s.Exchanges = append(s.Exchanges, ex)
	return resp, nil
}

var (
	hexID       = regexp.MustCompile(`[0-9a-fA-F]{32}`)
	jarName     = regexp.MustCompile(`[0-9a-fA-F-]{36}_[^/]+\.jar`)
	numberSeg   = regexp.MustCompile(`/[0-9]+(/|$)`)
	enumLike    = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	throwLine   = regexp.MustCompile(`^(?:Caused by: |Suppressed: |<Exception on server side:\s*)?([a-zA-Z_$][\w$]*(?:\.[\w$]+)+(?:Exception|Error|Throwable))(?::|$)`)
	namedPhrase = []string{
		"Could not execute application.", "Failed to rollback to checkpoint/savepoint", "Unable to load requested file",
		"Could not find Flink job", "Operation not found", "Not found: ", "Checkpointing has not been enabled",
		"Could not find checkpointing statistics", "Job has already been submitted.", "Application has already been submitted.",
		"Cannot find checkpoint or savepoint", "Cannot map checkpoint/savepoint state", "Internal server error.",
	}
)

func templatePath(p string) string {
	p = jarName.ReplaceAllString(p, "<jar>")
	p = hexID.ReplaceAllString(p, "<id>")
	for numberSeg.MatchString(p) {
		p = numberSeg.ReplaceAllString(p, "/<n>$1")
	}
	return p
}

// shapeOf reduces a decoded JSON value to its shape.
func shapeOf(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			out[templateKey(k)] = mergeShapes(out[templateKey(k)], shapeOf(x))
		}
		return out
	case []any:
		// Flink's error bodies list strings (a message, then the stack trace): one message in parts.
		if text, ok := joinStrings(v); ok {
			return []any{stringShape(text)}
		}
		var elem any
		for _, x := range v {
			elem = mergeShapes(elem, shapeOf(x))
		}
		if elem == nil {
			return []any{}
		}
		return []any{elem}
	case string:
		return stringShape(v)
	case float64:
		return "<number>"
	case bool:
		return "<bool>"
	case nil:
		return "<null>"
	}
	return fmt.Sprintf("<%T>", v)
}

func joinStrings(v []any) (string, bool) {
	parts := make([]string, 0, len(v))
	for _, x := range v {
		s, ok := x.(string)
		if !ok {
			return "", false
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "\n"), len(parts) > 0
}

func templateKey(k string) string {
	if hexID.MatchString(k) || jarName.MatchString(k) {
		return "<id>"
	}
	return k
}

// stringShape keeps an enum-like value, and of a message the exception classes and phrases it
// names (in the order they first appear); anything else is just a string.
func stringShape(s string) string {
	if enumLike.MatchString(s) {
		return s
	}
	var named []string
	seen := map[string]bool{}
	for _, line := range strings.Split(s, "\n") {
		m := throwLine.FindStringSubmatch(strings.TrimSpace(line))
		if m != nil && !strings.Contains(m[1], ".flinksim.") && !seen[m[1]] {
			seen[m[1]] = true
			named = append(named, m[1])
		}
	}
	for _, p := range namedPhrase {
		if strings.Contains(s, p) {
			named = append(named, "“"+p+"”")
		}
	}
	if len(named) == 0 {
		return "<string>"
	}
	return "<string naming " + strings.Join(named, ", ") + ">"
}

// mergeShapes unites the shapes of an array's elements (or of a key templated from several).
func mergeShapes(a, b any) any {
	if a == nil {
		return b
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		for k, v := range bm {
			am[k] = mergeShapes(am[k], v)
		}
		return am
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok {
		if len(al) == 0 {
			return bl
		}
		if len(bl) == 0 {
			return al
		}
		return []any{mergeShapes(al[0], bl[0])}
	}
	if as, ok := a.(string); ok {
		if bs, ok := b.(string); ok && as != bs && strings.HasPrefix(as, "<string") && strings.HasPrefix(bs, "<string") {
			return "<string>"
		}
	}
	return a
}

// compareShapes lists where the simulator's shape differs from real Flink's, one line each.
func compareShapes(where string, real, sim any) []string {
	var out []string
	switch r := real.(type) {
	case map[string]any:
		s, ok := sim.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: real Flink answers an object, the simulator %s", where, describe(sim))}
		}
		for _, k := range sortedShapeKeys(r) {
			if _, ok := s[k]; !ok {
				out = append(out, fmt.Sprintf("%s.%s: missing from the simulator (real: %s)", where, k, describe(r[k])))
				continue
			}
			out = append(out, compareShapes(where+"."+k, r[k], s[k])...)
		}
		for _, k := range sortedShapeKeys(s) {
			if _, ok := r[k]; !ok {
				out = append(out, fmt.Sprintf("%s.%s: only in the simulator (%s)", where, k, describe(s[k])))
			}
		}
	case []any:
		s, ok := sim.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: real Flink answers an array, the simulator %s", where, describe(sim))}
		}
		if len(r) > 0 && len(s) > 0 {
			out = append(out, compareShapes(where+"[]", r[0], s[0])...)
		}
	default:
		if fmt.Sprint(real) != fmt.Sprint(sim) {
			out = append(out, fmt.Sprintf("%s: real Flink %s, the simulator %s", where, describe(real), describe(sim)))
		}
	}
	return out
}

func describe(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case nil:
		return "nothing"
	}
	return fmt.Sprint(v)
}

func sortedShapeKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// compareRecordings lists every difference between real Flink's recording and the simulator's,
// step by step and request by request.
func compareRecordings(real, sim recording) []string {
	var out []string
	simSteps := map[string]step{}
	for _, s := range sim.Steps {
		simSteps[s.Name] = s
	}
	for _, rs := range real.Steps {
		ss, ok := simSteps[rs.Name]
		if !ok {
			out = append(out, fmt.Sprintf("%s: not reached on the simulator", rs.Name))
			continue
		}
		simEx := map[string]exchange{}
		for _, e := range ss.Exchanges {
			simEx[e.Request] = e
		}
		for _, re := range rs.Exchanges {
			se, ok := simEx[re.Request]
			if !ok {
				out = append(out, fmt.Sprintf("%s: %s: not asked of the simulator", rs.Name, re.Request))
				continue
			}
			where := rs.Name + ": " + re.Request
			if re.Status != se.Status {
				out = append(out, fmt.Sprintf("%s: status: real Flink %d, the simulator %d", where, re.Status, se.Status))
			}
			out = append(out, compareShapes(where+": body", re.Body, se.Body)...)
		}
	}
	return out
}
