package client

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// container is one open array or object while checkShape walks an answer.
type container struct {
	object bool
	// empty: no element or member seen yet.
	empty bool
	// wantKey: the next string is a member's name (objects only).
	wantKey bool
	// count of elements or members so far.
	count int
	// key is the offset and end of the current member's name, for messages.
	keyFrom, keyTo int
}

// checkShape walks a JSON body without allocating and says why it is refused when it holds more
// than maxValues values (array elements plus object members, at any depth) or nests arrays and
// objects deeper than maxDepth (at most maxNesting); "" when it is within both.
//
// It counts what a decoder would allocate for, before any decoder runs. It trusts the body to be
// well-formed: encoding/json checks that over the whole body before it allocates anything, and a
// malformed body is refused there.
func checkShape(body []byte, maxValues, maxDepth int) string {
	var stack [maxNesting + 1]container
	maxDepth = min(maxDepth, maxNesting)
	depth, values := 0, 0
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch c {
		case ' ', '\t', '\n', '\r', ':':
			continue
		case ']', '}':
			if depth > 0 {
				depth--
			}
			continue
		case ',':
			if depth == 0 {
				continue
			}
			top := &stack[depth-1]
			top.count++
			top.wantKey = top.object
			values++
			if values > maxValues {
				return fmt.Sprintf("it holds more than %d values (array elements and object members) at %s",
					maxValues, shapePath(body, stack[:depth]))
			}
			continue
		}
		// c begins a value, or a member's name.
		if depth > 0 && stack[depth-1].empty {
			top := &stack[depth-1]
			top.empty = false
			top.count = 1
			values++
			if values > maxValues {
				return fmt.Sprintf("it holds more than %d values (array elements and object members) at %s",
					maxValues, shapePath(body, stack[:depth]))
			}
		}
		switch c {
		case '"':
			end := stringEnd(body, i)
			if depth > 0 && stack[depth-1].wantKey {
				top := &stack[depth-1]
				top.wantKey, top.keyFrom, top.keyTo = false, i+1, end
			}
			i = end
		case '[', '{':
			if depth == maxDepth {
				return fmt.Sprintf("it nests arrays and objects deeper than %d at %s", maxDepth, shapePath(body, stack[:depth]))
			}
			stack[depth] = container{object: c == '{', empty: true, wantKey: c == '{'}
			depth++
		}
	}
	return ""
}

// stringEnd returns the offset of the quote that closes the string opening at body[open], or the
// end of body.
func stringEnd(body []byte, open int) int {
	for i := open + 1; i < len(body); {
		j := bytes.IndexAny(body[i:], `"\`)
		if j < 0 {
			break
		}
		i += j
		if body[i] == '"' {
			return i
		}
		i += 2 // a backslash and the character it escapes
	}
	return len(body)
}

// maxPath bounds the path in a message: a deeply nested answer has a long one.
const maxPath = 160

// shapePath names where in the body the walk stands, as in .vertices[1234].tasks.
func shapePath(body []byte, open []container) string {
	var b strings.Builder
	for _, c := range open {
		if b.Len() > maxPath {
			break
		}
		switch {
		case c.object && c.keyTo > c.keyFrom:
			b.WriteByte('.')
			b.WriteString(Excerpt(truncate(string(body[c.keyFrom:c.keyTo]), 40)))
		case c.object:
			b.WriteString(".{}")
		default:
			b.WriteString("[" + strconv.Itoa(max(c.count-1, 0)) + "]")
		}
	}
	if b.Len() == 0 {
		return "the top"
	}
	return truncate(b.String(), maxPath)
}
