// Package sessionjob is the FlinkSessionJob kind: one job on the Flink cluster of a
// FlinkSessionCluster. Its own handlers start the job there (fetching and uploading its jar off the
// worker), watch it, and move it when its spec or its cluster changes; stopping it (Savepointing,
// Cancelling, Recovering) and deleting it are the job phases every job owner shares (package
// lifecycle). A deleteMode None delete waits until the session cluster lists the job it leaves
// running.
//
// Its pass (Pass) embeds kindpass.Pass; the jar transfers in flight are its Memory.
package sessionjob
