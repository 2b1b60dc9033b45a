package convert

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// The Flink cluster of a FlinkDeployment: what a FlinkApplication and a FlinkSessionCluster share
// (v1beta1.ClusterSpec) and their JobManager and TaskManager.

// clusterParts are the parts of a FlinkDeployment's cluster that flinkfsm keeps in more than one
// place.
type clusterParts struct {
	cluster     v1beta1.ClusterSpec
	jobManager  v1beta1.JobManagerConfig
	taskManager v1beta1.TaskManagerConfig
	// taskManagers is spec.taskManager.replicas; nil when unset.
	taskManagers *int32
	restartNonce v1beta1.Nonce
	settings     jobSettings
}

// clusterOf converts what a FlinkDeployment says of its Flink cluster.
func clusterOf(spec *fields) clusterParts {
	var p clusterParts
	c := &p.cluster
	c.Image, _ = spec.text("image")
	if s, ok := spec.text("imagePullPolicy"); ok {
		c.ImagePullPolicy = corev1.PullPolicy(s)
	}
	c.ServiceAccountName, _ = spec.text("serviceAccount")
	if v, ok := spec.text("flinkVersion"); ok {
		c.FlinkVersion = flinkVersion(v)
	}
	c.PodTemplate = podTemplate(spec, "podTemplate")
	c.LogConfiguration = logConfiguration(spec)
	if mode, ok := spec.text("mode"); ok && !strings.EqualFold(mode, "standalone") {
		spec.out.warn(spec.at("mode"), fmt.Sprintf("%q: flinkfsm runs the JobManager and TaskManagers as Deployments of its own, as the Apache operator's standalone mode does", mode))
	}
	p.restartNonce = spec.nonce("restartNonce")
	config, settings := splitConfig(spec, spec.at("flinkConfiguration"), flatConfig(spec, "flinkConfiguration"))
	p.settings = settings
	if jm := spec.object("jobManager"); jm != nil {
		p.jobManager.Resources = resources(jm)
		if n, ok := jm.integer("replicas"); ok {
			r := int32(n)
			p.jobManager.Replicas = &r
		}
		p.jobManager.PodTemplate = podTemplate(jm, "podTemplate")
		jm.rest()
	}
	if tm := spec.object("taskManager"); tm != nil {
		p.taskManager.Resources = resources(tm)
		if n, ok := tm.integer("replicas"); ok {
			r := int32(n)
			p.taskManagers = &r
		}
		p.taskManager.PodTemplate = podTemplate(tm, "podTemplate")
		tm.rest()
	}
	c.FlinkConfig = ownedSettings(spec, config, &p)
	return p
}

// ownedSettings moves the Flink settings flinkfsm renders itself out of the configuration, to the
// fields that set them; those a user cannot choose are named.
func ownedSettings(spec *fields, config v1beta1.FlinkConfig, p *clusterParts) v1beta1.FlinkConfig {
	port := func(key string, to **int32) {
		if v, ok := config[key]; ok {
			delete(config, key)
			if n, err := strconv.ParseInt(fmt.Sprint(v), 10, 32); err == nil {
				m := int32(n)
				*to = &m
			} else {
				spec.out.warn(spec.at("flinkConfiguration."+key), fmt.Sprintf("%v is not a port; left out", v))
			}
		}
	}
	port("rest.port", &p.cluster.UIPort)
	port("jobmanager.rpc.port", &p.cluster.RPCPort)
	port("blob.server.port", &p.cluster.BlobPort)
	port("query.server.port", &p.cluster.QueryPort)
	port("metrics.internal.query-service.port", &p.cluster.MetricsQueryPort)
	port("taskmanager.numberOfTaskSlots", &p.taskManager.TaskSlots)
	for _, key := range []string{"jobmanager.rpc.address", "taskmanager.host", "kubernetes.cluster-id", "high-availability.cluster-id", "kubernetes.namespace"} {
		if _, ok := config[key]; ok {
			delete(config, key)
			spec.out.warn(spec.at("flinkConfiguration."+key), "flinkfsm names and addresses each cluster itself; left out")
		}
	}
	if len(config) == 0 {
		return nil
	}
	return config
}

// flinkVersion is an Apache flinkVersion (v1_20) as flinkfsm writes it (1.20).
func flinkVersion(v string) string {
	return strings.ReplaceAll(strings.TrimPrefix(strings.TrimPrefix(v, "v"), "V"), "_", ".")
}

// resources converts a JobManager's or TaskManager's resources: the Kubernetes requirements as
// they are, or the older resource {cpu, memory, ephemeralStorage}, which the Apache operator sets
// as requests and limits both, memory in Flink's syntax (2048m is 2048 MiB).
func resources(f *fields) *corev1.ResourceRequirements {
	var out *corev1.ResourceRequirements
	if r := f.object("resources"); r != nil {
		out = &corev1.ResourceRequirements{Requests: quantities(r, "requests"), Limits: quantities(r, "limits")}
		r.rest()
	}
	old := f.object("resource")
	if old == nil {
		return out
	}
	if out != nil {
		old.out.warn(old.path, "resources is set too, which the Apache operator takes instead; left out")
		old.m = nil
		return out
	}
	list := corev1.ResourceList{}
	if cpu, ok := old.text("cpu"); ok {
		if q, err := resource.ParseQuantity(cpu); err == nil {
			list[corev1.ResourceCPU] = q
		} else {
			old.out.warn(old.at("cpu"), fmt.Sprintf("%q is not a CPU amount; left out", cpu))
		}
	}
	for key, name := range map[string]corev1.ResourceName{"memory": corev1.ResourceMemory, "ephemeralStorage": corev1.ResourceEphemeralStorage} {
		if s, ok := old.text(key); ok {
			if q, err := flinkMemory(s); err == nil {
				list[name] = q
			} else {
				old.out.warn(old.at(key), err.Error()+"; left out")
			}
		}
	}
	old.rest()
	if len(list) == 0 {
		return nil
	}
	return &corev1.ResourceRequirements{Requests: list, Limits: list.DeepCopy()}
}

// quantities takes a map of Kubernetes quantities, memory read as the Apache operator reads it.
func quantities(f *fields, key string) corev1.ResourceList {
	m := f.stringMap(key)
	if len(m) == 0 {
		return nil
	}
	out := corev1.ResourceList{}
	for name, s := range m {
		parse := resource.ParseQuantity
		if corev1.ResourceName(name) == corev1.ResourceMemory {
			// The Apache operator reads memory in Flink's syntax first: its 2048m is 2048 MiB.
			parse = flinkMemory
		}
		q, err := parse(s)
		if err != nil {
			f.out.warn(f.at(key+"."+name), fmt.Sprintf("%q is not a quantity; left out", s))
			continue
		}
		out[corev1.ResourceName(name)] = q
	}
	return out
}

// flinkMemory reads a memory size as Flink writes it (MemorySize: a number and a binary unit: b,
// k, m, g, t with or without b, or their long names; bytes without one) as a Kubernetes quantity.
func flinkMemory(s string) (resource.Quantity, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9') {
		i++
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if i == 0 || err != nil {
		// Kubernetes' own syntax (2Gi) is what some manifests write.
		if q, err := resource.ParseQuantity(strings.TrimSpace(s)); err == nil {
			return q, nil
		}
		return resource.Quantity{}, fmt.Errorf("%q is not a memory size", s)
	}
	shift := map[string]uint{"": 0, "b": 0, "bytes": 0, "k": 10, "kb": 10, "kibibytes": 10, "m": 20, "mb": 20, "mebibytes": 20,
		"g": 30, "gb": 30, "gibibytes": 30, "t": 40, "tb": 40, "tebibytes": 40}
	unit := strings.TrimSpace(t[i:])
	sh, ok := shift[unit]
	if !ok {
		if q, err := resource.ParseQuantity(strings.TrimSpace(s)); err == nil {
			return q, nil
		}
		return resource.Quantity{}, fmt.Errorf("%q: unknown unit %q", s, unit)
	}
	return *resource.NewQuantity(n<<sh, resource.BinarySI), nil
}

// logFiles are the log configuration files a cluster takes (the CRD's rule on logConfiguration).
var logFiles = []string{"log4j-console.properties", "logback-console.xml"}

// logConfiguration carries the log configuration files flinkfsm writes into the cluster; the others
// (the Apache operator writes any name it is given) are named.
func logConfiguration(spec *fields) map[string]string {
	files := spec.stringMap("logConfiguration")
	for name := range files {
		if !slices.Contains(logFiles, name) {
			spec.out.warn(spec.at("logConfiguration")+"."+name, "flinkfsm writes log4j-console.properties and logback-console.xml, which Flink's console logging reads; left out")
			delete(files, name)
		}
	}
	if len(files) == 0 {
		return nil
	}
	return files
}
