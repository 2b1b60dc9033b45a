// Package flinksim simulates Flink 1.20 JobManagers so flinkfsm's tests can exercise
// the operator against REST semantics that match a real cluster: asynchronous
// savepoints, cancellation that takes time, slot shortage, lost savepoints,
// JobManager crashes without HA, and flaky endpoints.
//
// A JobManager evaluates every time-based transition lazily from its clock when it
// is accessed; it never starts goroutines. With a fake clock a test therefore gets
// the same answers every run, and stepping the clock is all it takes to make time
// pass. The REST surface follows /work/shared/flink/REST.md (Flink 1.20).
//
// A Fleet watches pods on a Kubernetes API and runs one JobManager per Flink
// cluster (identified by the flink-app, flink-app-hash and flink-deployment-type
// labels), so integration tests can point the operator at one HTTP address.
package flinksim
