// Package kindpass is what every kind the phase machine runs builds its pass on: the environment
// the kinds share (clients, clock, configuration, the caches' readers and the memories kept
// between passes), the part of a pass no kind owns (Pass: its view of Flink, the session it runs
// in), and the steps that run around every handler, in the machine's order (Run): the JobManager
// Services guarded before Flink is called, HA ConfigMaps of clusters gone for good removed, the
// owner's FlinkSnapshots kept in step with its ledger, the one status write, and the Events.
//
// A kind's package holds its pass type, which embeds *Pass, its phase table and its handlers; it
// hands its own hooks to Run. Nothing here names a kind's phases or reads a kind's spec.
package kindpass
