package flinksim

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// Rate is how fast records arrive at a Load's source, in records per second, as a function of the
// offset from when the Load was set. Build one with Constant, Steps, Ramp, Wave or DailyWave and
// add them up with Sum; the zero Rate is no input at all. Where the sum is below zero, nothing
// arrives.
//
// A Rate is linear between known points: the steps, the ends of ramps, and a wave's grid of 1/1440
// of its period (a minute for a daily wave), between which the wave is interpolated. That is what
// lets the model integrate the backlog exactly rather than by sampling, so that what a test reads
// does not depend on how often it reads.
type Rate struct {
	terms []rateTerm
	err   error
}

// rateTerm is one addend of a Rate: linear between its breaks.
type rateTerm interface {
	at(t time.Duration) float64
	// breaks calls add for each point in (from, to) where the term is not linear across.
	breaks(from, to time.Duration, add func(time.Duration))
}

// Step is a change of a Steps rate: from At on, records arrive at Rate per second.
type Step struct {
	At   time.Duration
	Rate float64
}

// Constant is records arriving at r per second, always.
func Constant(r float64) Rate {
	if err := checkRate(r); err != nil {
		return Rate{err: err}
	}
	return Rate{terms: []rateTerm{constantRate(r)}}
}

// Steps is a rate of initial per second that jumps to each Step's rate at its offset.
func Steps(initial float64, steps ...Step) Rate {
	s := stepRate{initial: initial, steps: slices.Clone(steps)}
	slices.SortStableFunc(s.steps, func(a, b Step) int { return cmp.Compare(a.At, b.At) })
	if err := checkRate(initial); err != nil {
		return Rate{err: err}
	}
	for _, st := range s.steps {
		if err := checkRate(st.Rate); err != nil {
			return Rate{err: err}
		}
	}
	return Rate{terms: []rateTerm{s}}
}

// Ramp is a rate of fromRate per second until from, changing linearly to toRate at to, and toRate
// after. Summed with others, a ramp from 0 to a negative rate takes away what they add.
func Ramp(from, to time.Duration, fromRate, toRate float64) Rate {
	if to < from {
		return Rate{err: fmt.Errorf("ramp ends (%s) before it starts (%s)", to, from)}
	}
	if err := errors.Join(checkRate(fromRate), checkRate(toRate)); err != nil {
		return Rate{err: err}
	}
	return Rate{terms: []rateTerm{rampRate{from: from, to: to, r0: fromRate, r1: toRate}}}
}

// Wave is a sine wave around mean, amplitude above and below it, repeating every period and at its
// highest at peak (and every period from there).
func Wave(mean, amplitude float64, period, peak time.Duration) Rate {
	if period < waveGridPoints {
		return Rate{err: fmt.Errorf("a wave's period must be at least %dns, not %s", waveGridPoints, period)}
	}
	if err := errors.Join(checkRate(mean), checkRate(amplitude)); err != nil {
		return Rate{err: err}
	}
	return Rate{terms: []rateTerm{waveRate{mean: mean, amplitude: amplitude, period: period, peak: peak,
		grid: period / waveGridPoints}}}
}

// DailyWave is a Wave with a period of a day: the traffic of a service whose users sleep at night.
func DailyWave(mean, amplitude float64, peak time.Duration) Rate {
	return Wave(mean, amplitude, 24*time.Hour, peak)
}

// Sum adds rates up.
func Sum(rates ...Rate) Rate {
	var out Rate
	for _, r := range rates {
		out.terms = append(out.terms, r.terms...)
		out.err = errors.Join(out.err, r.err)
	}
	return out
}

// At is the rate at an offset from when the Load was set.
func (r Rate) At(offset time.Duration) float64 { return max(0, r.raw(offset)) }

// Records is how many records arrive between two offsets: the integral of At.
func (r Rate) Records(from, to time.Duration) float64 {
	total := 0.0
	r.pieces(from, to, func(s0, s1 time.Duration, a0, a1 float64) {
		total += (a0 + a1) / 2 * (s1 - s0).Seconds()
	})
	return total
}

func (r Rate) raw(t time.Duration) float64 {
	sum := 0.0
	for _, term := range r.terms {
		sum += term.at(t)
	}
	return sum
}

// pieces cuts [from, to] where the rate is not linear across and calls f for each piece with the
// rate at its ends (the limits from inside the piece, where a step falls on an end).
func (r Rate) pieces(from, to time.Duration, f func(s0, s1 time.Duration, a0, a1 float64)) {
	if to <= from {
		return
	}
	points := []time.Duration{from, to}
	for _, term := range r.terms {
		term.breaks(from, to, func(t time.Duration) { points = append(points, t) })
	}
	slices.Sort(points)
	points = slices.Compact(points)
	for i := 0; i+1 < len(points); i++ {
		s0, s1 := points[i], points[i+1]
		a0, a1 := r.linearEnds(s0, s1)
		// Below zero nothing arrives: a piece the sum crosses zero in is two.
		if (a0 < 0) != (a1 < 0) && a0 != 0 && a1 != 0 {
			mid := s0 + time.Duration(a0/(a0-a1)*float64(s1-s0))
			if mid > s0 && mid < s1 {
				m0, m1 := r.linearEnds(s0, mid)
				n0, n1 := r.linearEnds(mid, s1)
				f(s0, mid, max(0, m0), max(0, m1))
				f(mid, s1, max(0, n0), max(0, n1))
				continue
			}
		}
		f(s0, s1, max(0, a0), max(0, a1))
	}
}

// linearEnds is the raw rate at the ends of a piece it is linear on, found from two points inside
// it so that a step on either end does not count.
func (r Rate) linearEnds(s0, s1 time.Duration) (float64, float64) {
	h := s1 - s0
	if h < 4 {
		v := r.raw(s0 + h/2)
		return v, v
	}
	q1, q3 := r.raw(s0+h/4), r.raw(s1-h/4)
	slope := (q3 - q1) / float64(s1-h/4-(s0+h/4))
	return q1 - slope*float64(h/4), q3 + slope*float64(h/4)
}

func checkRate(r float64) error {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return fmt.Errorf("a rate must be a finite number, not %v", r)
	}
	return nil
}

type constantRate float64

func (c constantRate) at(time.Duration) float64                                 { return float64(c) }
func (c constantRate) breaks(time.Duration, time.Duration, func(time.Duration)) {}

type stepRate struct {
	initial float64
	steps   []Step // by offset
}

func (s stepRate) at(t time.Duration) float64 {
	r := s.initial
	for _, st := range s.steps {
		if st.At > t {
			break
		}
		r = st.Rate
	}
	return r
}

func (s stepRate) breaks(from, to time.Duration, add func(time.Duration)) {
	for _, st := range s.steps {
		if st.At > from && st.At < to {
			add(st.At)
		}
	}
}

type rampRate struct {
	from, to time.Duration
	r0, r1   float64
}

func (r rampRate) at(t time.Duration) float64 {
	switch {
	case t <= r.from:
		return r.r0
	case t >= r.to:
		return r.r1
	}
	return r.r0 + (r.r1-r.r0)*float64(t-r.from)/float64(r.to-r.from)
}

func (r rampRate) breaks(from, to time.Duration, add func(time.Duration)) {
	for _, t := range []time.Duration{r.from, r.to} {
		if t > from && t < to {
			add(t)
		}
	}
}

// waveGridPoints is how many straight pieces make up one period of a wave.
const waveGridPoints = 1440

type waveRate struct {
	mean, amplitude float64
	period, peak    time.Duration
	grid            time.Duration
}

func (w waveRate) exact(t time.Duration) float64 {
	phase := float64((t-w.peak)%w.period) / float64(w.period)
	return w.mean + w.amplitude*math.Cos(2*math.Pi*phase)
}

// at interpolates the wave between the points of its grid, which is anchored at offset 0.
func (w waveRate) at(t time.Duration) float64 {
	k := t / w.grid
	if t < 0 && t%w.grid != 0 {
		k--
	}
	g0 := k * w.grid
	v0, v1 := w.exact(g0), w.exact(g0+w.grid)
	return v0 + (v1-v0)*float64(t-g0)/float64(w.grid)
}

func (w waveRate) breaks(from, to time.Duration, add func(time.Duration)) {
	k := from/w.grid + 1
	if from < 0 {
		k = from / w.grid
	}
	for t := k * w.grid; t < to; t += w.grid {
		if t > from {
			add(t)
		}
	}
}
