// Package autoscaling is what the operator reads and keeps for the autoscaler (package autoscaler,
// which decides from values alone): the samples of a running job's vertices, read from Flink's
// metrics within a budget of calls and time per pass, and kept within a budget of memory per job
// whatever its JobManager answers; and the autoscaler's settings and record between the kinds' API
// and package autoscaler (spec.autoscaler over the operator's defaults, status.autoscaler). The
// application's pass applies what the autoscaler decides.
package autoscaling
