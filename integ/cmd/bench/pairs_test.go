package main

import (
	"strings"
	"testing"
)

func TestTheMedianPairIsKeptOnceEvenWhenRatiosRepeat(t *testing.T) {
	if got := medianIndex([]float64{2.0, 1.0, 1.5}); got != 2 {
		t.Errorf("median of 2.0, 1.0, 1.5 at index %d, want 2", got)
	}
	same := []float64{1.5, 1.5, 1.5}
	m := medianIndex(same)
	sc := &scaleResult{Ratio: same[m]}
	for i, r := range same {
		sc.Pairs = append(sc.Pairs, pair{Ratio: r, Kept: i == m})
	}
	if n := strings.Count(pairRatios(sc), "(kept)"); n != 1 {
		t.Errorf("%q marks %d pairs kept, want 1", pairRatios(sc), n)
	}
}
