// Command kubectl-flink is the kubectl plugin for flinkfsm: `kubectl flink status APP`, `wait`,
// `suspend`, `promote`... Everything it does is a read or a spec patch of a FlinkApplication or a
// FlinkSessionJob, or the creation of a FlinkSnapshot, so RBAC and audit logs stay meaningful.
package main

import (
	"os"

	"github.com/flinkfsm/flinkfsm/pkg/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
