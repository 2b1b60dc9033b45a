// Package lyftcompat runs the Lyft operator's own integration scenarios (lyft/flinkk8soperator
// integ/: simple_test.go, checkpoint_failure_test.go, job_cancellation_test.go, scaleup_test.go,
// blue_green_deployment_test.go) against flinkfsm on the local cluster and the Flink simulator
// (integ/localenv), with Lyft's test manifest as it is (testdata/test_app.yaml). Each test names the
// Lyft test function it comes from and keeps each of its assertions; where the simulator cannot do
// what Lyft's test image does (run the test jar's code, fail a pull of a broken image) the test uses
// the simulator's fault injection and says so. Where flinkfsm deliberately differs from Lyft, the
// suite sets what gives Lyft's behaviour (jobStabilizationPeriod: 0) or asserts the documented
// difference; docs/migrating-from-lyft.md ("Lyft's own scenarios") lists them.
//
// Run it with `go test ./integ/lyftcompat/ -count=1 -timeout 20m`; `make test` runs it.
package lyftcompat
