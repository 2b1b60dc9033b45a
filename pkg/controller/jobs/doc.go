// Package jobs is the job core: what the operator knows of one Flink job and what it does to it,
// over plain values. A pass observes each job it may own once (View), judges how alive it is
// (Liveness), and runs the job operations on what it saw: run (with the fence before a
// submission), savepoint with and without cancel, cancel, end, and the restore choice.
//
// It knows no kind of resource, no Kubernetes client and no operator configuration, and it never
// reads a spec or a status: a kind hands it the job's record (Job, Trigger), who owns the job
// (Owner) and its limits, and gets back a step that says what happened and what to persist. The
// record is the write-ahead log: an operation that chose an id (a job id, a trigger id) returns
// Wait{Persist: true} so that the id is written before the call that depends on it is made.
package jobs
