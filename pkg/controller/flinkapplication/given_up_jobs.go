package flinkapplication

// keepJobGivenUpOn keeps the job of a deployment given up on as the object's job while it may still
// run (lifecycle.Pass.KeepGivenUpJob). An application's deploy on a cluster of its own leaves it
// behind, and no job is started while a leftover cluster's JobManager is left (leftover_clusters.go).
func keepJobGivenUpOn(rc *Context) { rc.KeepGivenUpJob(false) }
