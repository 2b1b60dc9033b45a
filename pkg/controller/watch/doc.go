// Package watch holds the informers of the operator: those of the kinds the machine runs
// (FlinkApplications, FlinkSessionClusters, FlinkSessionJobs), listed and watched item by item and
// as far as the shard selects them; those of FlinkSnapshots; and those of the Kubernetes objects
// the operator owns, trimmed to what a pass reads of them. It maps their events to the objects to
// wake, and reads the caches back through its Listers and the per-object metrics.
//
// It knows no kind's handlers, no pass and no phase: the caller hands in how to queue an object
// (Config.Enqueue) and how to tell its own status write coming back (Config.Echo).
package watch
