package idsource

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestASourceReadsTheReaderItIsGivenUntilRestored(t *testing.T) {
	var s Source
	restore := s.Use(bytes.NewReader([]byte{0xab, 0xcd, 0xef}))
	assert.Equal(t, "abcde", s.Hex(5))
	restore()
	a, b := s.Hex(32), s.Hex(32)
	assert.Len(t, a, 32)
	assert.NotEqual(t, a, b, "crypto/rand again once restored")
}
