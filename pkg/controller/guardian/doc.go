// Package guardian decides, in one place, whether durable state may go: a savepoint's storage, a
// FlinkSnapshot that shows one, the HA ConfigMaps of a Flink cluster. Every deletion of durable state
// asks it first. It also holds the one rule every restart, rollback and way back obeys: a job that
// replaces another never starts from older state than the newest state the replaced job is known to
// have completed or started from.
//
// It takes values and returns values. The caller reads, once per pass, what every object of the
// namespace names (References), and the guardian answers for each piece of state whether anything
// still needs it, and who.
//
// Ownership is by identity, never by name: a Holder carries its UID, and a piece of state names the
// UID of the object that made it, so an object created again under a deleted one's name is another
// holder and never inherits what its namesake left.
package guardian
