package printable

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTextEscapesWhatActsOnATerminal(t *testing.T) {
	cases := map[string]string{
		"s3://b/savepoint-1":                  "s3://b/savepoint-1",
		"café ∞ 日本":                           "café ∞ 日本",
		"s3://b/\x1b[2K\x1b[1Agood":           `s3://b/\x1b[2K\x1b[1Agood`,
		"line\nforged: ok\r":                  `line\nforged: ok\r`,
		"exe.\u202egnp":                       `exe.\u202egnp`,
		"\u2066isolate\u2069 zero\u200dwidth": `\u2066isolate\u2069 zero\u200dwidth`,
		"bell\x07 del\x7f c1\u009b":           `bell\x07 del\x7f c1\x9b`,
	}
	for in, want := range cases {
		assert.Equal(t, want, Text(in), "%q", in)
	}
}
