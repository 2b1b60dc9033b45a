// Package fsm is the phase machine's vocabulary, which knows no kind: the phases, what a handler
// decides in one pass (Outcome), a phase table's row (Spec) and the diagrams drawn from a table.
// Each kind keeps its table and its pass type; the table is the one place where its phases meet
// their handlers, and the docs' diagrams are generated from it.
package fsm
