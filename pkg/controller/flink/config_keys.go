package flink

import (
	"fmt"
	"strings"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Flink reads its configuration as "key: value" lines: it trims keys, cuts a line at the first ": "
// and drops what follows a "#". A flinkConfig key with spaces, ":" or "#" would therefore become a
// different key in Flink than the one the operator rendered, and could override what the operator
// owns (ports, the JobManager address, the HA cluster id). Such keys are refused, as are values for
// the keys the operator owns that differ from what it sets, and a FLINK_PROPERTIES variable of the
// user's, which would replace the whole rendered configuration.

// checkFlinkConfig names the first flinkConfig key or environment variable that could take over
// what the operator renders; nil when there is none.
func checkFlinkConfig(o *ClusterOwner, rendered map[string]string) error {
	conf, err := o.Spec.FlinkConfig.Strings()
	if err != nil {
		return err
	}
	for key, value := range conf {
		if problem := keyProblem(key); problem != "" {
			return fmt.Errorf("flinkConfig key %q %s", key, problem)
		}
		if want, owned := rendered[key]; owned && ownedKeys[key] && value != want {
			return fmt.Errorf("flinkConfig %q is set by the operator (%s); %s", key, want, ownedBy(key))
		}
	}
	for _, c := range []struct {
		field string
		env   v1beta1.EnvironmentConfig
	}{{"jobManagerConfig", o.Spec.JobManagerConfig.EnvConfig}, {"taskManagerConfig", o.TaskManagerConfig.EnvConfig}} {
		for i, e := range c.env.Env {
			if e.Name == "FLINK_PROPERTIES" {
				return fmt.Errorf("%s.envConfig.env[%d]: FLINK_PROPERTIES carries the configuration the operator renders and cannot be set; use flinkConfig", c.field, i)
			}
		}
	}
	return nil
}

func keyProblem(key string) string {
	switch {
	case key == "":
		return "is empty"
	case strings.TrimSpace(key) != key || strings.ContainsAny(key, " \t"):
		return "contains whitespace, which Flink trims or splits at"
	case strings.Contains(key, ":"):
		return `contains ":", where Flink splits a line into key and value`
	case strings.Contains(key, "#"):
		return `contains "#", where Flink starts a comment`
	}
	return ""
}

// ownedKeys are the settings the operator renders for every cluster; a user value may only repeat them.
var ownedKeys = map[string]bool{
	"jobmanager.rpc.address": true, "jobmanager.rpc.port": true, "blob.server.port": true, "query.server.port": true,
	"rest.port": true, "metrics.internal.query-service.port": true, "taskmanager.numberOfTaskSlots": true,
	"taskmanager.host": true, "kubernetes.cluster-id": true, "high-availability.cluster-id": true, "kubernetes.namespace": true,
}

func ownedBy(key string) string {
	switch key {
	case "jobmanager.rpc.port":
		return "set spec.rpcPort instead"
	case "blob.server.port":
		return "set spec.blobPort instead"
	case "query.server.port":
		return "set spec.queryPort instead"
	case "rest.port":
		return "set spec.uiPort instead"
	case "metrics.internal.query-service.port":
		return "set spec.metricsQueryPort instead"
	case "taskmanager.numberOfTaskSlots":
		return "set spec.taskManagerConfig.taskSlots instead"
	case "kubernetes.namespace":
		return "under high availability Flink keeps its HA data in the owner's own namespace"
	}
	return "it names this cluster and cannot be chosen"
}
