// Package autoscaler is the job autoscaler's decision rules, over plain values: from Flink's own
// metrics per job vertex it decides a parallelism per vertex, within safety rules, and it returns a
// rescaled job that does not run stable to the last parallelism that did. It knows no Kubernetes
// kind, no Flink client and no clock: the caller collects the metrics, passes the time, applies a
// decision and persists the History it is handed back.
//
// # The rates
//
// A subtask's true processing rate is records in over busy time (busyTimeMsPerSecond), from the
// samples of the window busy at least 5% of the time: below that a few milliseconds of measuring
// error make the rate many times off. It is a ratio of sums over those samples, so that a sample
// counts as much as the time it measured. A vertex that was never that busy idles: its rate is
// taken as the least it can be (its records in, as if busy 5% of the time), which scales it down
// cautiously and never below what that bound carries. A vertex that took in no records, or
// reports no busy time at all (Flink's legacy sources), keeps its parallelism: its capacity is
// unknown.
//
// A source's target rate is its arrival rate (what it read, plus the least-squares growth of its
// backlog over the window) plus its backlog over CatchUpDuration; a source that reports no
// backlog is taken at what it reads, which under back-pressure may be less than its demand (the
// report says so). A vertex downstream takes its observed input scaled as its upstream vertices'
// target output is to their observed output, each upstream's target output being its target
// input times its own output ratio. Scaling the observed input keeps as it is what per-vertex
// metrics cannot tell apart: which share of an upstream's output goes to which of its outputs.
//
// # The window
//
// A decision reads the last MetricsWindow of samples, unless the load changed within it: a vertex's
// busy time moved, from the samples before a point to those after, by at least the
// UtilizationTolerance and by four standard errors (the latest such point, when there are several).
// The window's mean is then of neither load; after a step up, mostly of the load before it, so that
// a vertex near the band's edge would tip over on one new sample and be sized for far too little.
// So the decision reads only the samples since the change, once they span a fifth of the window and
// are at least three; until then nothing is rescaled. Noise and slow drifts move a vertex's busy
// time by less than the tolerance and leave the window whole. The price: a burst of the load that
// lasts a fifth of the window is answered as a step is.
//
// # The parallelism
//
// A vertex whose utilization under its target, at its current parallelism, lies within
// TargetUtilization ± UtilizationTolerance keeps its parallelism: noise and drift within the band
// never rescale, and a scale in either direction lands at or below the target utilization, well
// inside the band, so the next window does not undo it. Outside the band the recommendation is
// the fewest subtasks that take the target at TargetUtilization. It is then bounded, in this order:
// by the scale factors of one decision; by the hard limits (configured least and greatest, per
// vertex by id or name, the vertex's maxParallelism, a source's partitions), which win over the
// factors, the greatest of them over the least; and a changed parallelism is aligned to the least
// divisor of the key groups (a source's partitions) at or above it, when one lies within
// AlignmentMargin and the limits. Alignment only rounds up, so unlike an alignment that may round
// down or give up, it never refuses a needed scale-up; and it never turns a scale-down into none.
//
// A scale-up applies at once, sized for this evaluation's load. Where it is not applied
// (recommend-only, or a restart without fresh state) it is sized for the highest load of the
// evaluations within StabilizationInterval, so that a vertex at the band's top edge, in and out of
// it with the noise, keeps recommending the same. A scale-down applies once the vertex's load stayed below the
// tolerance band, at its parallelism now, over the whole ScaleDownDelay, and goes to what the
// highest load of the delay asks for: the lower load must have lasted, and its highest must still
// fit. Each vertex's LoadRecord in History.Load keeps its load over the delay in busy subtasks
// (its target rate over one subtask's rate), as a sliding maximum. A load in busy subtasks does
// not depend on the parallelism it was measured at, so the record outlives a rescale: one
// vertex's rescale does not start another's delay over, a vertex whose load goes on falling after
// a scale-down scales down again when the band says so, not a delay later, and a vertex at the
// band's bottom edge, in and out of it with the noise, keeps its parallelism and shows it. Nor
// does a vertex scale down within ScaleDownDelay of the autoscaler scaling it up: a scale-up
// aligned to a divisor of the key groups may leave the load that asked for it below the band. An
// evaluation that cannot evaluate adds nothing and forgets nothing; a stretch without evaluations
// longer than a rescale takes (the readiness timeout, the stabilization interval and a window)
// starts the record, and with it the delay, over, since the load in between was not seen.
//
// Each rescale restarts the job and its metrics, and the next decision comes a stabilization
// interval and a window later. So a scale-down that is due waits while the record says another
// vertex's scale-down, or a deeper one of its own, comes due before then (if no higher load
// comes), as long as none has waited that long: one rescale then does what two would, and sooner
// than the second would come. A scale-up never waits, and takes the scale-downs due with it.
//
// # When nothing is decided
//
// Evaluate decides nothing, and says why: with an invalid Config or job graph; during the
// cool-down after a way back; while the job has failed, restarts or its checkpoints fail; before
// the job has run stable since its parallelism last changed; during StabilizationInterval after
// that change; and without a full window of metrics, which means the window begins after the
// stabilization interval, and no stretch of more than a fifth of it (at its start, between
// samples, before now) passed without a sample. So after a change the next decision comes at the earliest
// StabilizationInterval + MetricsWindow later. Nothing is rescaled either while the load just
// changed and the samples since are too few to decide on. A decision is reported and not applied in
// recommend-only mode, and when it would restart the job (the rescale is not in place) and the
// ledger has no fresh state to restore it from.
//
// # The way back
//
// WayBack returns a job the autoscaler rescaled to the last parallelism that ran stable, with its
// state, when the rescaled job failed or did not run stable within ReadinessTimeout of the rescale
// taking effect, and holds the autoscaler off for CoolDown. It goes back once, never from a
// change it did not make (a recommendation, a way back) and never to a parallelism that did not
// run stable.
//
// # The history
//
// History is a value the caller persists in status: the last MaxChanges decisions that changed
// the parallelism (or in recommend-only mode would have; a recommendation repeated is recorded
// once) with reasons of at most 200 bytes, the last stable parallelism, each vertex's load record
// and the end of the cool-down. Its JSON takes at most 4 KiB plus 1 KiB per vertex.
package autoscaler
