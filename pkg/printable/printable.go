// Package printable makes text from JobManagers and users safe to show people: status fields,
// Events, logs and the kubectl plugin's output. A savepoint path, an exception or a jar URI can
// carry terminal escapes (a colour that hides a line, a cursor move that rewrites one) or
// bidirectional overrides that make text read other than it is; shown raw, they act on the reader's
// terminal. Stored values that a restore needs stay exact: only what is displayed is escaped.
package printable

import (
	"fmt"
	"strings"
	"unicode"
)

// Text is s with every control, bidirectional-override and other format character written out as
// an escape (\x1b, \n, \u202e); s itself when it has none.
func Text(s string) string {
	if strings.IndexFunc(s, Escaped) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == unicode.ReplacementChar:
			b.WriteRune(r)
		case Escaped(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case Escaped(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Escaped tells whether Text writes the rune out as an escape: it acts on a terminal or on how text
// reads rather than being read. These are C0 and C1 controls, DEL, and Unicode format characters
// (bidirectional embeddings, overrides and isolates, zero-width joiners and the like).
func Escaped(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}
