package realflink

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// podProcess is the Flink process of one pod: started when the pod runs, started again when it
// ends by itself (restartPolicy Always), ended when the pod goes.
type podProcess struct {
	f                    *Fleet
	namespace, pod, role string
	uid                  string
	created              time.Time
	restURL              string
	spec                 jvmSpec

	mu       sync.Mutex
	proc     *process
	ended    bool // the pod is gone: no restart
	down     bool // the fleet reported the container terminated and not yet restarted it
	restarts int32
	stopped  chan struct{}
}

// newPodProcess prepares the pod's process from what the pod carries; the caller holds f.mu.
func (f *Fleet) newPodProcess(c *fleetCluster, pod *corev1.Pod) (*podProcess, error) {
	role := pod.Labels[labelDeploymentType]
	if role != roleJobManager && role != roleTaskManager {
		return nil, fmt.Errorf("unknown role %q", role)
	}
	main := mainContainer(pod, role)
	if main == nil {
		return nil, fmt.Errorf("no %s container", role)
	}
	image, ok := f.opts.Images[main.Image]
	if !ok {
		return nil, fmt.Errorf("image %s is not one the fleet knows (FleetOptions.Images)", main.Image)
	}
	dir := f.podDir(pod.Namespace, pod.Name)
	fs, err := f.podFileSystem(pod, main, image, dir)
	if err != nil {
		return nil, err
	}
	env := containerEnv(pod, main)
	conf := map[string]string{}
	for k, v := range image.Config {
		conf[k] = v
	}
	for k, v := range parseFlinkProperties(expandEnv(env["FLINK_PROPERTIES"], env)) {
		conf[k] = v
	}
	fs.rewritePaths(conf)

	p := &podProcess{f: f, namespace: pod.Namespace, pod: pod.Name, uid: string(pod.UID), role: role,
		created: pod.CreationTimestamp.Time, stopped: make(chan struct{})}
	if role == roleJobManager {
		ports := c.ports
		if ports.rpc == 0 || c.hasLiveJobManager() {
			// A second JobManager at once (HA with several replicas) has an address of its own.
			ports = jobManagerPorts{rest: freePortOrZero(), rpc: freePortOrZero(), blob: freePortOrZero()}
		}
		if c.ports.rpc == 0 {
			c.ports = ports
		}
		overrideJobManagerAddress(conf, ports)
		p.restURL = "http://127.0.0.1:" + strconv.Itoa(ports.rest)
	} else {
		overrideTaskManagerAddress(conf, c.ports)
	}
	for _, k := range []string{"io.tmp.dirs", "web.tmpdir", "blob.storage.directory"} {
		if _, set := conf[k]; !set {
			conf[k] = fs.resolve("/tmp")
		}
	}
	for k, v := range boundedMemory() {
		conf[k] = v
	}
	if f.opts.Kubeconfig != "" {
		conf["kubernetes.config.file"] = f.opts.Kubeconfig
	}
	cp, err := image.Dist.classpath()
	if err != nil {
		return nil, err
	}
	var log4j []byte
	if b, err := os.ReadFile(fs.resolve(FlinkConfDir + "/log4j-console.properties")); err == nil {
		log4j = b // the image's entrypoint runs Flink in the foreground with this file
	}
	var envList []string
	for k, v := range env {
		if k != "FLINK_PROPERTIES" && k != "OPERATOR_FLINK_CONFIG" {
			envList = append(envList, k+"="+v)
		}
	}
	p.spec = jvmSpec{dist: image.Dist, java: f.opts.Java, classpath: cp, dir: dir, name: role, conf: conf,
		log4j: log4j, env: envList}
	if role == roleJobManager {
		p.spec.resourceCommand, p.spec.mainClass = "GET_JM_RESOURCE_PARAMS", "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint"
	} else {
		p.spec.resourceCommand, p.spec.mainClass = "GET_TM_RESOURCE_PARAMS", "org.apache.flink.runtime.taskexecutor.TaskManagerRunner"
	}
	return p, nil
}

// FlinkConfDir is the conf directory of Flink's images.
const FlinkConfDir = "/opt/flink/conf"

func (c *fleetCluster) hasLiveJobManager() bool {
	for _, p := range c.processes {
		if p.role == roleJobManager && !p.isEnded() {
			return true
		}
	}
	return false
}

// overrideJobManagerAddress gives a JobManager what its pod's network would: loopback, and ports
// of its own for those the operator fixed per pod.
func overrideJobManagerAddress(conf map[string]string, ports jobManagerPorts) {
	for k, v := range map[string]string{
		"jobmanager.rpc.address": "127.0.0.1", "jobmanager.bind-host": "127.0.0.1",
		"rest.address": "127.0.0.1", "rest.bind-address": "127.0.0.1",
		"jobmanager.rpc.port": strconv.Itoa(ports.rpc), "rest.port": strconv.Itoa(ports.rest),
		"blob.server.port": strconv.Itoa(ports.blob),
		// Fixed per pod by the operator; any free port here.
		"query.server.port": "0", "metrics.internal.query-service.port": "0",
	} {
		conf[k] = v
	}
}

// overrideTaskManagerAddress gives a TaskManager loopback and the JobManager's ports, which its
// Service would have reached (with HA it finds the leader itself, and these are only a start).
func overrideTaskManagerAddress(conf map[string]string, jm jobManagerPorts) {
	for k, v := range map[string]string{
		"jobmanager.rpc.address": "127.0.0.1", "jobmanager.rpc.port": strconv.Itoa(jm.rpc),
		"taskmanager.host": "127.0.0.1", "taskmanager.bind-host": "127.0.0.1",
		"blob.server.port": strconv.Itoa(jm.blob), "rest.port": "0",
		"query.server.port": "0", "metrics.internal.query-service.port": "0",
		"taskmanager.rpc.port": "0", "taskmanager.data.port": "0",
	} {
		conf[k] = v
	}
}

// freePortOrZero is a free loopback port, or 0 (any) when none can be found.
func freePortOrZero() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func mainContainer(pod *corev1.Pod, role string) *corev1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == role {
			return &pod.Spec.Containers[i]
		}
	}
	return nil
}

// containerEnv is the container's environment as the kubelet gives it: values, the pod's fields
// (its IP is loopback here), and $(NAME) references to earlier variables.
func containerEnv(pod *corev1.Pod, c *corev1.Container) map[string]string {
	env := map[string]string{}
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			switch e.ValueFrom.FieldRef.FieldPath {
			case "metadata.name":
				v = pod.Name
			case "metadata.namespace":
				v = pod.Namespace
			case "status.podIP", "status.hostIP":
				v = "127.0.0.1"
			case "spec.nodeName":
				v = pod.Spec.NodeName
			}
		}
		for name, val := range env {
			v = strings.ReplaceAll(v, "$("+name+")", val)
		}
		env[e.Name] = v
	}
	return env
}

// expandEnv is the image entrypoint's envsubst: $NAME and ${NAME} of the container's environment.
func expandEnv(s string, env map[string]string) string {
	return os.Expand(s, func(name string) string {
		if v, ok := env[name]; ok {
			return v
		}
		return "$" + name
	})
}

// parseFlinkProperties reads FLINK_PROPERTIES as the image's entrypoint appends it to Flink's
// configuration: one "key: value" a line.
func parseFlinkProperties(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}

func (p *podProcess) current() *process {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return nil
	}
	return p.proc
}

func (p *podProcess) up() bool {
	proc := p.current()
	if proc == nil {
		return false
	}
	ended, _ := proc.exited()
	return !ended
}

func (p *podProcess) isEnded() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended
}

func (p *podProcess) reportedDown() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.down
}

// run starts the process and starts it again each time it ends by itself, until the pod goes.
func (p *podProcess) run() {
	defer close(p.stopped)
	backoff := time.Second
	for {
		if p.isEnded() {
			return
		}
		proc, err := launchJVM(p.spec)
		if err != nil {
			p.f.logf("realflink: %s/%s: %s did not start: %v", p.namespace, p.pod, p.role, err)
		} else {
			p.mu.Lock()
			p.proc = proc
			restarted := p.down
			p.down = false
			ended := p.ended
			p.mu.Unlock()
			if ended {
				proc.stop(0)
				return
			}
			p.f.logf("realflink: %s/%s: %s started (pid %d, Flink %s)", p.namespace, p.pod, p.role, proc.cmd.Process.Pid, p.spec.dist.Version)
			if restarted {
				p.reportRunning(proc)
			}
			<-proc.done
		}
		if p.isEnded() {
			return
		}
		code := 1
		if proc != nil {
			code = exitCode(proc)
		}
		p.f.logf("realflink: %s/%s: %s exited with %d; the pod reports it, and it restarts in %s", p.namespace, p.pod, p.role, code, backoff)
		p.mu.Lock()
		p.down = true
		p.mu.Unlock()
		p.reportTerminated(code)
		time.Sleep(backoff)
		backoff = min(2*backoff, 10*time.Second)
		p.mu.Lock()
		p.restarts++
		p.mu.Unlock()
	}
}

// end stops the process for good, giving it grace to shut down (SIGTERM first).
func (p *podProcess) end(grace time.Duration) {
	p.mu.Lock()
	p.ended = true
	proc := p.proc
	p.mu.Unlock()
	if proc != nil {
		proc.stop(grace)
	}
}

// kill kills the process at once, as the loss of its container does; it restarts as any crash.
func (p *podProcess) kill() {
	if proc := p.current(); proc != nil {
		proc.stop(0)
	}
}

// Kill kills the process of a pod (SIGKILL), as an OOM kill or a crash does: the pod reports the
// container terminated, and it restarts. It reports whether the pod had a live process.
func (f *Fleet) Kill(namespace, pod string) bool {
	f.mu.Lock()
	var target *podProcess
	for _, c := range f.clusters {
		for _, p := range c.processes {
			if p.namespace == namespace && p.pod == pod {
				target = p
			}
		}
	}
	f.mu.Unlock()
	if target == nil || !target.up() {
		return false
	}
	target.kill()
	return true
}

func exitCode(p *process) int {
	_, err := p.exited()
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}

// reportTerminated writes what the kubelet would after the container ended: the container
// terminated and not ready, and the pod not ready.
func (p *podProcess) reportTerminated(code int) {
	now := metav1.Now()
	p.updateStatus(func(s *corev1.PodStatus, cs *corev1.ContainerStatus) {
		reason := "Error"
		if code == 0 {
			reason = "Completed"
		}
		started := now
		if cs.State.Running != nil {
			started = cs.State.Running.StartedAt
		}
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: int32(code), Reason: reason, StartedAt: started, FinishedAt: now}}
		cs.Ready, cs.Started = false, ptrBool(false)
		setCondition(s, corev1.ContainersReady, corev1.ConditionFalse, now)
		setCondition(s, corev1.PodReady, corev1.ConditionFalse, now)
	})
}

// reportRunning writes what the kubelet would after restarting the container.
func (p *podProcess) reportRunning(proc *process) {
	now := metav1.Now()
	p.mu.Lock()
	restarts := p.restarts
	p.mu.Unlock()
	p.updateStatus(func(s *corev1.PodStatus, cs *corev1.ContainerStatus) {
		if cs.State.Terminated != nil {
			cs.LastTerminationState = corev1.ContainerState{Terminated: cs.State.Terminated}
		}
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
		cs.RestartCount = restarts
		cs.Ready, cs.Started = true, ptrBool(true)
		setCondition(s, corev1.ContainersReady, corev1.ConditionTrue, now)
		setCondition(s, corev1.PodReady, corev1.ConditionTrue, now)
	})
}

func (p *podProcess) updateStatus(edit func(*corev1.PodStatus, *corev1.ContainerStatus)) {
	pods := p.f.kube.CoreV1().Pods(p.namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := pods.Get(context.Background(), p.pod, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if string(pod.UID) != p.uid {
			return nil
		}
		i := -1
		for j := range pod.Status.ContainerStatuses {
			if pod.Status.ContainerStatuses[j].Name == p.role {
				i = j
			}
		}
		if i < 0 {
			pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: p.role})
			i = len(pod.Status.ContainerStatuses) - 1
		}
		edit(&pod.Status, &pod.Status.ContainerStatuses[i])
		_, err = pods.UpdateStatus(context.Background(), pod, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		p.f.logf("realflink: %s/%s: reporting the container's state: %v", p.namespace, p.pod, err)
	}
}

func setCondition(s *corev1.PodStatus, t corev1.PodConditionType, status corev1.ConditionStatus, now metav1.Time) {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			if s.Conditions[i].Status != status {
				s.Conditions[i].Status, s.Conditions[i].LastTransitionTime = status, now
			}
			return
		}
	}
	s.Conditions = append(s.Conditions, corev1.PodCondition{Type: t, Status: status, LastTransitionTime: now})
}

func ptrBool(b bool) *bool { return &b }
