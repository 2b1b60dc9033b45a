package flinksim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"time"
)

// loadRun is a Load at work on one JobManager: its topic, integrated up to at. It outlives the
// JobManager's jobs and processes, as the topic and the consumer group's offsets outlive a Flink
// cluster's.
type loadRun struct {
	spec   *loadSpec
	origin time.Time // offset 0 of the input
	at     time.Time
	// What has arrived in the topic, what the jobs have read of it, and what waits.
	arrived, consumed, backlog float64
	// consumer is the job that read the topic at at, deployed at deployedAt; its counters count
	// from base, what had been read when it was deployed (Flink's counters start anew with every
	// deployment of the tasks).
	consumer   *job
	deployedAt time.Time
	base       float64
}

// SetLoad makes the jobs submitted from now on run l's vertices, and starts its input: offset 0 of
// l.Input is now, with an empty topic. A Load without vertices ends the Load: jobs submitted from
// then on have the default source and sink and no load. Jobs already submitted keep their vertices;
// those of an earlier Load stop reading.
func (jm *JobManager) SetLoad(l Load) error {
	spec, err := l.compile()
	if err != nil {
		return err
	}
	jm.mu.Lock()
	defer jm.mu.Unlock()
	// Set before what is due is applied: a JobManager with HA that starts recovers its jobs with
	// the Load it is given at once.
	now := jm.clock.Now()
	if now.Before(jm.lastNow) {
		now = jm.lastNow
	}
	jm.load = nil
	if spec != nil {
		jm.load = &loadRun{spec: spec, origin: now, at: now}
	}
	jm.advance()
	return nil
}

// SetInput changes the rate at which records arrive at the Load's topic from now on, as a step in
// a production load does: the topic, its backlog and the jobs reading it carry on as they are,
// where SetLoad starts a new topic that the jobs already running no longer read. Offsets of input
// still count from when the Load was set. Without a Load there is no input to change.
func (jm *JobManager) SetInput(input Rate) error {
	if input.err != nil {
		return fmt.Errorf("input: %w", input.err)
	}
	jm.mu.Lock()
	defer jm.mu.Unlock()
	if jm.load == nil {
		return errors.New("no Load to change the input of")
	}
	jm.advance() // what arrived until now arrived at the old rate
	jm.load.spec.input = input
	return nil
}

// handOverLoad ends this JobManager's part in its Load and returns the topic as it stands, for the
// cluster's next JobManager (Fleet).
func (jm *JobManager) handOverLoad() *loadRun {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	jm.advance()
	r := jm.load
	jm.load = nil
	if r != nil {
		r.consumer = nil
	}
	return r
}

// takeOverLoad continues a topic another JobManager of the cluster read; nothing read it since.
func (jm *JobManager) takeOverLoad(r *loadRun) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	jm.load = r // before the jobs it recovers with HA
	jm.advance()
}

func (jm *JobManager) currentLoad() *loadSpec {
	if jm.load == nil {
		return nil
	}
	return jm.load.spec
}

// LoadStatus is where a Load's topic stands.
type LoadStatus struct {
	// Arrived, Consumed and Backlog are the records that have arrived in the topic since the Load
	// was set, those the jobs have read, and those that wait.
	Arrived, Consumed, Backlog float64
	// Rate is how many records arrive per second now, and Throughput how many the source reads.
	Rate, Throughput float64
}

// LoadStatus tells where the Load's topic stands now; ok is false without a Load.
func (jm *JobManager) LoadStatus() (status LoadStatus, ok bool) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	now := jm.advance()
	r := jm.load
	if r == nil {
		return LoadStatus{}, false
	}
	status = LoadStatus{Arrived: r.arrived, Consumed: r.consumed, Backlog: r.backlog, Rate: r.rate(now)}
	if r.consumer != nil {
		status.Throughput = r.flow(r.consumer.vertexParallelism, now).read
	}
	return status, true
}

// consumerOf is the job that reads the Load's topic: the oldest job of the Load whose tasks run.
// Others of the Load that run at the same time read nothing, as consumers of the same group
// without a partition.
func (jm *JobManager) consumerOf(r *loadRun) *job {
	for _, j := range jm.jobs {
		if j.load == r.spec && j.state == stateRunning && j.hasSlots {
			return j
		}
	}
	return nil
}

// integrateLoad carries the topic forward to to, with the jobs as they are. advance calls it before
// every transition, so between two calls nothing changes how the topic is read.
func (jm *JobManager) integrateLoad(to time.Time) {
	r := jm.load
	if r == nil {
		return
	}
	if c := jm.consumerOf(r); c != r.consumer || (c != nil && !c.deployedAt.Equal(r.deployedAt)) {
		r.consumer, r.base = c, r.consumed
		if c != nil {
			r.deployedAt = c.deployedAt
		}
	}
	if !to.After(r.at) {
		return
	}
	limit := 0.0
	if r.consumer != nil {
		limit = r.spec.limit(r.consumer.vertexParallelism)
	}
	r.integrate(r.at.Sub(r.origin), to.Sub(r.origin), limit)
	r.at = to
}

// integrate carries the topic from offset from to offset to while the source reads at most limit
// records per second. On each piece of the input the arrival rate a is linear, and the backlog
// B follows B' = a − limit while it is positive and stays at zero while a ≤ limit: B is F less the
// lowest F sank below zero, where F = B₀ + ∫(a − limit). F is quadratic on the piece, so its low
// is at an end or where a = limit, which makes the integral exact.
func (r *loadRun) integrate(from, to time.Duration, limit float64) {
	r.spec.input.pieces(from, to, func(s0, s1 time.Duration, a0, a1 float64) {
		h := (s1 - s0).Seconds()
		slope := (a1 - a0) / h
		f := func(x float64) float64 { return r.backlog + a0*x + slope*x*x/2 - limit*x }
		low := min(0, f(h))
		if x := (limit - a0) / slope; slope > 0 && x > 0 && x < h {
			low = min(low, f(x))
		}
		arrived := (a0 + a1) / 2 * h
		backlog := max(0, f(h)-low)
		r.consumed += arrived - (backlog - r.backlog)
		r.arrived += arrived
		r.backlog = backlog
	})
}

// rate is the arrival rate at now.
func (r *loadRun) rate(now time.Time) float64 { return r.spec.input.At(now.Sub(r.origin)) }

// flow is how records move through a job's vertices at one moment.
type flow struct {
	read          float64   // records per second the source reads
	in            []float64 // records per second each vertex takes in
	saturated     []bool    // the vertex takes in all it can
	backpressured []bool    // a vertex downstream of it is saturated
}

// flow is how the consumer, its vertices at parallelism p, moves records at now: the source reads
// as fast as the slowest vertex allows while there is a backlog, and what arrives otherwise.
func (r *loadRun) flow(p []int, now time.Time) flow {
	s := r.spec
	limit := s.limit(p)
	read := min(r.rate(now), limit)
	if r.backlog > 0 {
		read = limit
	}
	n := len(s.names)
	f := flow{read: read, in: make([]float64, n), saturated: make([]bool, n), backpressured: make([]bool, n)}
	for v := range s.names {
		f.in[v] = read * s.gain[v]
		f.saturated[v] = read > 0 && f.in[v] >= s.capacityAt(v, p[v])*(1-1e-9)
	}
	for v := range s.names {
		for w := range s.names {
			f.backpressured[v] = f.backpressured[v] || (s.upstreamOf[v][w] && f.saturated[w])
		}
	}
	return f
}

// noisy strays value by up to ±noise, the same for the same metric of the same subtask within a
// second of the Load's time, whenever and however often it is read.
func (s *loadSpec) noisy(value float64, metric string, v, subtask int, offset time.Duration) float64 {
	if s.noise == 0 || value == 0 {
		return value
	}
	h := fnv.New64a()
	var buf [32]byte
	binary.LittleEndian.PutUint64(buf[0:], uint64(s.seed))
	binary.LittleEndian.PutUint64(buf[8:], uint64(v))
	binary.LittleEndian.PutUint64(buf[16:], uint64(subtask))
	binary.LittleEndian.PutUint64(buf[24:], uint64(offset/time.Second))
	_, _ = h.Write(buf[:])
	_, _ = h.Write([]byte(metric))
	// splitmix64's finaliser spreads FNV's bits, whose high end varies little for close inputs.
	z := h.Sum64()
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	u := float64(z>>11)/(1<<53)*2 - 1 // in [-1, 1)
	return value * (1 + s.noise*u)
}

func sum(values []int) int {
	n := 0
	for _, v := range values {
		n += v
	}
	return n
}

// clampMillis keeps a time-per-second metric within a second.
func clampMillis(ms float64) float64 { return math.Max(0, math.Min(1000, ms)) }
