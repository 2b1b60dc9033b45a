package flinksim

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// HostileAnswer is how a hostile JobManager answers one endpoint (Faults.Hostile). The request is
// processed as usual; only the body sent back changes. The zero value changes nothing.
//
// A JobManager runs the tenant's own image, so its answers are whatever the tenant makes them: the
// operator bounds what one answer may cost (issue 25), and these answers are the ones that test
// the bounds from outside the operator: just under a body cap, nested past any sane depth, or
// trickling in for as long as the client waits.
type HostileAnswer struct {
	// Shape rebuilds the body: ShapeHuge and ShapeNested put a filler into the member Field of the
	// real answer, sized so that the whole body is Bytes long. Empty keeps the real body, padded
	// with white space up to Bytes when it is shorter.
	Shape string
	// Bytes is the length of the body sent (its Content-Length); a body cannot be shorter than
	// the real answer's members other than Field.
	Bytes int
	// Element is what ShapeHuge repeats in its array; "{}" when empty. `{}` gives a decoder the
	// most values per byte, a larger element the most memory per value.
	Element string
	// Field is the member that carries the filler, a dotted path into the answer's object
	// ("exceptionHistory.entries"), replacing what the real answer has there. Empty means the
	// endpoint's own list (hostileFields), or "padding" for an endpoint without one. An answer
	// that is not a JSON object is replaced by the filler whole.
	Field string
	// BytesPerSecond, when positive, sends the status and headers at once, with the Content-Length
	// of the whole body, and then the body at this rate until it is all sent or the client gives
	// up: a slow-drip answer. It is wall-clock time, like Faults.Latency.
	BytesPerSecond int
	// SuccessOnly leaves answers outside 2xx as they are: a JobManager hostile only once there is
	// something to answer, such as a job that exists.
	SuccessOnly bool
}

// Shapes of HostileAnswer.
const (
	// ShapeHuge is an array of HostileAnswer.Element repeated as often as Bytes allows.
	ShapeHuge = "huge"
	// ShapeNested is arrays nested in each other as deep as Bytes allows: [[[[…]]]].
	ShapeNested = "nested"
)

// hostileFields is, per endpoint, the list its answer carries and a client decodes element by
// element: where a filler costs a client the most.
var hostileFields = map[string]string{
	EndpointJobs:         "jobs",
	EndpointJobsOverview: "jobs",
	EndpointJob:          "vertices",
	EndpointCheckpoints:  "history",
	EndpointExceptions:   "exceptionHistory.entries",
	EndpointTaskManagers: "taskmanagers",
	EndpointJars:         "files",
	EndpointApplications: "applications",
	EndpointApplication:  "jobs",
}

// appliesTo tells whether h changes an answer of this status.
func (h HostileAnswer) appliesTo(status int) bool {
	if h.SuccessOnly && (status < 200 || status > 299) {
		return false
	}
	return h.Shape != "" || h.Bytes > 0 || h.BytesPerSecond > 0
}

// writeHostile sends resp as h makes it.
func writeHostile(w http.ResponseWriter, req *http.Request, resp response, endpoint string, h HostileAnswer) {
	real, err := json.Marshal(resp.body)
	if err != nil {
		writeResponse(w, resp)
		return
	}
	body := hostileBody(real, endpoint, h)
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(resp.status)
	if h.BytesPerSecond <= 0 {
		_, _ = w.Write(body)
		return
	}
	drip(req.Context(), w, body, h.BytesPerSecond)
}

// hostileBody builds the body h describes around the real answer.
func hostileBody(real []byte, endpoint string, h HostileAnswer) []byte {
	if h.Shape == "" {
		return padTo(real, h.Bytes)
	}
	field := h.Field
	if field == "" {
		field = hostileFields[endpoint]
	}
	if field == "" {
		field = "padding"
	}
	path := strings.Split(field, ".")
	var members map[string]json.RawMessage
	if json.Unmarshal(real, &members) != nil || members == nil {
		return filler(h, h.Bytes)
	}
	// The real member goes rather than stays beside the filler: a decoder that keeps the first of
	// two members of one name would skip the filler.
	delete(members, path[0])
	rest, _ := json.Marshal(members)
	var head bytes.Buffer
	head.Write(rest[:len(rest)-1])
	if len(members) > 0 {
		head.WriteByte(',')
	}
	for i, name := range path {
		if i > 0 {
			head.WriteByte('{')
		}
		key, _ := json.Marshal(name)
		head.Write(key)
		head.WriteByte(':')
	}
	tail := strings.Repeat("}", len(path))
	room := h.Bytes - head.Len() - len(tail)
	out := make([]byte, 0, max(h.Bytes, head.Len()+len(tail)+2))
	out = append(out, head.Bytes()...)
	out = append(out, filler(h, room)...)
	return append(out, tail...)
}

// filler is the value of a hostile answer's Field: n bytes of h's shape, or the shortest value of
// that shape when n leaves no room.
func filler(h HostileAnswer, n int) []byte {
	n = max(n, 2)
	out := make([]byte, 0, n)
	switch h.Shape {
	case ShapeNested:
		depth := n / 2
		out = append(out, bytes.Repeat([]byte{'['}, depth)...)
		out = append(out, bytes.Repeat([]byte{']'}, depth)...)
	default:
		el := h.Element
		if el == "" {
			el = "{}"
		}
		out = append(out, '[')
		// "[" + el + ("," + el)… + "]" takes 1 + count×(len(el)+1) bytes.
		for count := (n - 1) / (len(el) + 1); count > 0; count-- {
			out = append(out, el...)
			if count > 1 {
				out = append(out, ',')
			}
		}
		out = append(out, ']')
	}
	// White space between tokens makes up the exact length.
	return padTo(out, n)
}

// padTo adds white space after body's last token up to n bytes in all.
func padTo(body []byte, n int) []byte {
	if len(body) >= n {
		return body
	}
	out := make([]byte, len(body), n)
	copy(out, body)
	return append(out, bytes.Repeat([]byte{' '}, n-len(body))...)
}

// dripTick is how often a slow-drip answer sends what is due: often enough that a rate of a few
// bytes a second goes out byte by byte.
const dripTick = 50 * time.Millisecond

// drip sends body at rate bytes a second, flushing each piece, until it is all sent or the
// client is gone.
func drip(ctx context.Context, w http.ResponseWriter, body []byte, rate int) {
	rc := http.NewResponseController(w)
	// The headers go at once: the client has its answer's status and is left waiting for the body.
	_ = rc.Flush()
	tick := time.NewTicker(dripTick)
	defer tick.Stop()
	start, sent := time.Now(), 0
	for sent < len(body) {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		due := min(len(body), int(float64(rate)*time.Since(start).Seconds()))
		if due <= sent {
			continue
		}
		if _, err := w.Write(body[sent:due]); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
		sent = due
	}
}
