// Package lifecycle holds what every kind that owns a job shares in its pass: the pass's view of
// the object's job and clusters (Pass), which each kind's own pass embeds, and, as they move here
// from the kinds' package, the job phases the kinds share (savepointing, cancelling, recovering,
// deleting) and the status summary. It knows no kind: what differs between kinds reaches it as
// values and hooks.
package lifecycle
