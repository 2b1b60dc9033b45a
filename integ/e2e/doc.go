// Package e2e is flinkfsm's integration suite: the real operator binary against a real local
// Kubernetes control plane and the Flink simulator (integ/localenv), driven the way a user drives it.
// Every test asserts on what Flink saw (jobs, savepoints, the job timeline), not only on the
// operator's own account in status, because status is what a buggy operator would get wrong too.
//
// Run it with `go test ./integ/e2e/ -count=1 -timeout 20m`. Each test works in its own namespace;
// all share one environment, whose directory (logs of every component and of the operator) is
// printed at the start and again when a test fails. A failed test logs its applications' history,
// Events and jobs as the simulator saw them; FLINKFSM_E2E_DIAGNOSTICS=1 logs them for every test.
package e2e
