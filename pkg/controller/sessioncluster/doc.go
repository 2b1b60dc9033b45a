// Package sessioncluster is the FlinkSessionCluster kind: a Flink cluster that the jobs of
// FlinkSessionJobs run on, with no job of its own. A spec change starts the new Flink cluster beside
// the running one; once it is ready, status.deployHash names it and every job moves itself across
// per its own upgradeMode. The old cluster is deleted when no job is left on it, and the object
// only once no FlinkSessionJob names it.
//
// Its pass (Pass) embeds kindpass.Pass; its phase table, handlers and the records it keeps of its
// Flink clusters (status.clusters) and of the jobs deleted FlinkSessionJobs left running
// (status.leftJobs) are here.
package sessioncluster
