// Command podpolicy writes deploy/policy.yaml, the pod security ValidatingAdmissionPolicy, from the
// pod policy's rule table in pkg/controller/flink, which the operator's own check runs: the two
// layers cannot drift. hack/update-codegen.sh runs it; hack/verify.sh fails when the file is stale.
package main

import (
	"fmt"
	"os"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

func main() {
	path := flink.AdmissionPolicyPath
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	if err := os.WriteFile(path, flink.AdmissionPolicy(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
