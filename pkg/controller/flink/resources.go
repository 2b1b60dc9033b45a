package flink

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Lyft's memory fractions: the share of the container's memory that Flink's process size (1.11 and
// later) or heap (earlier) leaves to the rest of the container.
const (
	DefaultSystemMemoryFraction  = 0.2
	DefaultOffHeapMemoryFraction = 0.5
)

// JobManagerResources is the JobManager container's resources: the spec's, or Lyft's default of 4 CPU
// and 3072Mi, requested and limited alike so the pod gets the Guaranteed QoS class.
func (o ClusterOwner) JobManagerResources() corev1.ResourceRequirements {
	return resourcesOr(o.Spec.JobManagerConfig.Resources, "4", "3072Mi")
}

// TaskManagerResources is the TaskManager container's resources: the spec's, or Lyft's default of
// 2 CPU and 1024Mi, requested and limited alike.
func (o ClusterOwner) TaskManagerResources() corev1.ResourceRequirements {
	return resourcesOr(o.TaskManagerConfig.Resources, "2", "1024Mi")
}

func resourcesOr(r *corev1.ResourceRequirements, cpu, memory string) corev1.ResourceRequirements {
	if r != nil {
		return *r.DeepCopy()
	}
	list := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse(memory),
	}
	return corev1.ResourceRequirements{Requests: list, Limits: list.DeepCopy()}
}

// componentMemory is what decides one component's Flink memory setting.
type componentMemory struct {
	component      string // "jobmanager" or "taskmanager", the prefix of Flink's keys
	field          string // the spec field, for error messages
	resources      corev1.ResourceRequirements
	offHeap        *float64
	systemFraction *float64
}

// memoryConfig sizes Flink's memory to fit the container: from Flink 1.11 on the whole process
// (<component>.memory.process.size), leaving systemMemoryFraction of the container to everything
// else; before 1.11 the heap (<component>.heap.size), leaving offHeapMemoryFraction. Each fraction
// means nothing to the other memory model, so setting the wrong one is an error rather than silently
// ignored. A container without a memory request or limit gets no key, and Flink's own default.
func memoryConfig(o *ClusterOwner) (map[string]string, error) {
	modern := isModernFlink(o.Spec.FlinkVersion)
	out := map[string]string{}
	for _, c := range []componentMemory{
		{JobManagerComponent, "jobManagerConfig", o.JobManagerResources(),
			o.Spec.JobManagerConfig.OffHeapMemoryFraction, o.Spec.JobManagerConfig.SystemMemoryFraction},
		{TaskManagerComponent, "taskManagerConfig", o.TaskManagerResources(),
			o.TaskManagerConfig.OffHeapMemoryFraction, o.TaskManagerConfig.SystemMemoryFraction},
	} {
		key, fraction, err := c.keyAndFraction(modern, o.Spec.FlinkVersion)
		if err != nil {
			return nil, err
		}
		bytes, ok := containerMemory(c.resources)
		if !ok {
			continue
		}
		flinkBytes := int64(math.Floor(float64(bytes) * (1 - fraction)))
		if flinkBytes < MinFlinkMemory {
			return nil, fmt.Errorf("spec.%s.resources: the container's memory (%d bytes) less its %s (%v) leaves Flink %d bytes, "+
				"below 1Mi; give the container more memory (Flink needs hundreds of MiB) or a smaller fraction",
				c.field, bytes, fractionName(modern), fraction, flinkBytes)
		}
		out[key] = fmt.Sprintf("%dk", flinkBytes/1024)
	}
	return out, nil
}

// MinFlinkMemory is the least memory the operator sizes Flink to. Less would render as nothing at all
// ("0k"); Flink itself needs far more, but how much depends on its version and settings.
const MinFlinkMemory = 1 << 20

func fractionName(modern bool) string {
	if modern {
		return "systemMemoryFraction"
	}
	return "offHeapMemoryFraction"
}

func (c componentMemory) keyAndFraction(modern bool, version string) (string, float64, error) {
	if modern {
		if c.offHeap != nil {
			return "", 0, c.wrongFraction("offHeapMemoryFraction", version, "1.11 and later", "systemMemoryFraction")
		}
		f, err := c.fraction("systemMemoryFraction", c.systemFraction, DefaultSystemMemoryFraction)
		return c.component + ".memory.process.size", f, err
	}
	if c.systemFraction != nil {
		return "", 0, c.wrongFraction("systemMemoryFraction", version, "before 1.11", "offHeapMemoryFraction")
	}
	f, err := c.fraction("offHeapMemoryFraction", c.offHeap, DefaultOffHeapMemoryFraction)
	return c.component + ".heap.size", f, err
}

func (c componentMemory) wrongFraction(name, version, versions, instead string) error {
	return fmt.Errorf("spec.%s.%s does not apply to flinkVersion %q: Flink %s is sized with %s",
		c.field, name, version, versions, instead)
}

func (c componentMemory) fraction(name string, f *float64, def float64) (float64, error) {
	if f == nil {
		return def, nil
	}
	if *f < 0 || *f >= 1 {
		return 0, fmt.Errorf("spec.%s.%s must be at least 0 and below 1, not %v", c.field, name, *f)
	}
	return *f, nil
}

// containerMemory is the memory Flink may assume it has: the request, or the limit when only that is set.
func containerMemory(r corev1.ResourceRequirements) (int64, bool) {
	for _, list := range []corev1.ResourceList{r.Requests, r.Limits} {
		if q, ok := list[corev1.ResourceMemory]; ok && q.Value() > 0 {
			return q.Value(), true
		}
	}
	return 0, false
}
