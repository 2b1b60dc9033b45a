package flink

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// programArgs is split as Flink 1.x splits it, so that the list the operator sends runs the same
// arguments on 1.x and on 2.x, which only takes the list.
func TestProgramArgumentsAreSplitAsFlinkSplitsThem(t *testing.T) {
	cases := map[string][]string{
		"":                     nil,
		"--input a --output b": {"--input", "a", "--output", "b"},
		// Flink reads a leading space as an empty argument; so does the list, so main() sees the same.
		"  --input   a  ":                    {"", "--input", "a"},
		`--name "two words" --x 'it is' --y`: {"--name", "two words", "--x", "it is", "--y"},
		`--path=/a/b"c"d`:                    {"--path=/a/bcd"},
		`"" --z`:                             {`--z`},
	}
	for in, want := range cases {
		assert.Equal(t, want, ProgramArguments(in), "%q", in)
	}
}
