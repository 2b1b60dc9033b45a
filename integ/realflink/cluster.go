package realflink

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// Options shape a standalone session cluster. The zero value is one JobManager and one TaskManager
// with two slots.
type Options struct {
	// TaskManagers is how many TaskManager processes to start (1 when 0).
	TaskManagers int
	// Slots is each TaskManager's taskmanager.numberOfTaskSlots (2 when 0).
	Slots int
	// Config is Flink configuration over the harness's own (config.go), as strings, e.g.
	// "execution.checkpointing.interval": "2s".
	Config map[string]string
	// Java is the java binary: $JAVA_HOME/bin/java, else java on PATH, when empty.
	Java string
	// StartTimeout bounds the wait for every TaskManager to register (2 minutes when 0).
	StartTimeout time.Duration
}

// Cluster is a running standalone Flink: one JobManager process and TaskManager processes of a
// cached release, on loopback with ports of their own, their state, checkpoints, savepoints and logs
// in a directory of the test's. Every process ends when the test does.
type Cluster struct {
	Dist Dist
	// URL is the JobManager's REST base URL, http://127.0.0.1:<port>.
	URL string
	// Dir holds the cluster's files: conf-*/ and log/ per process, checkpoints/, savepoints/ and
	// tmp/.
	Dir string
	// CheckpointDir and SavepointDir are the configured state directories (plain paths; Flink is
	// told file:// URIs).
	CheckpointDir, SavepointDir string

	t     testing.TB
	opts  Options
	java  string
	cp    string
	conf  map[string]string
	jm    *process
	tms   []*process
	stats memoryStats
}

// Start starts a cluster of the release and waits until every TaskManager has registered. It fails
// the test when the cluster does not come up, with the processes' logs.
func Start(t testing.TB, d Dist, o Options) *Cluster {
	t.Helper()
	if o.TaskManagers <= 0 {
		o.TaskManagers = 1
	}
	if o.Slots <= 0 {
		o.Slots = 2
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 2 * time.Minute
	}
	cp, err := d.classpath()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := &Cluster{
		Dist: d, Dir: dir, t: t, opts: o, java: javaBinary(o.Java), cp: cp,
		CheckpointDir: filepath.Join(dir, "checkpoints"), SavepointDir: filepath.Join(dir, "savepoints"),
	}
	for _, sub := range []string{"log", "tmp", "jars", "checkpoints", "savepoints"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rest, rpc := freePort(t), freePort(t)
	c.URL = "http://127.0.0.1:" + strconv.Itoa(rest)
	c.conf = c.baseConfig(rest, rpc)
	for k, v := range o.Config {
		c.conf[k] = v
	}
	t.Cleanup(c.stop)

	if err := c.startJobManager(); err != nil {
		t.Fatalf("starting the JobManager of Flink %s: %v\n%s", d.Version, err, c.logTails())
	}
	for i := 0; i < o.TaskManagers; i++ {
		if err := c.startTaskManager(); err != nil {
			t.Fatalf("starting TaskManager %d of Flink %s: %v\n%s", i, d.Version, err, c.logTails())
		}
	}
	c.stats.start(c.processes)
	if err := c.awaitTaskManagers(o.TaskManagers, o.StartTimeout); err != nil {
		t.Fatalf("Flink %s did not come up: %v\n%s", d.Version, err, c.logTails())
	}
	return c
}

// processes are the cluster's live JVMs.
func (c *Cluster) processes() []*process {
	out := []*process{c.jm}
	return append(out, c.tms...)
}

func (c *Cluster) startJobManager() error {
	p, err := c.launch("jobmanager", "GET_JM_RESOURCE_PARAMS", "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint")
	if err != nil {
		return err
	}
	c.jm = p
	return nil
}

func (c *Cluster) startTaskManager() error {
	p, err := c.launch(fmt.Sprintf("taskmanager-%d", len(c.tms)), "GET_TM_RESOURCE_PARAMS", "org.apache.flink.runtime.taskexecutor.TaskManagerRunner")
	if err != nil {
		return err
	}
	c.tms = append(c.tms, p)
	return nil
}

// launch starts one of the cluster's processes with the cluster's configuration.
func (c *Cluster) launch(name, resourceCommand, mainClass string) (*process, error) {
	return launchJVM(jvmSpec{
		dist: c.Dist, java: c.java, classpath: c.cp, dir: c.Dir, name: name, conf: c.conf,
		resourceCommand: resourceCommand, mainClass: mainClass,
	})
}

// jvmSpec is one Flink process to start: which release, its configuration, and where its files go.
type jvmSpec struct {
	dist            Dist
	java, classpath string
	// dir holds conf-<name>/ and log/.
	dir, name string
	conf      map[string]string
	// log4j is the logging configuration to use; the release's conf/log4j.properties when empty.
	log4j                      []byte
	resourceCommand, mainClass string
	// env is added to the process's environment.
	env []string
}

// launchJVM does what Flink's jobmanager.sh and taskmanager.sh do: it writes the process's
// configuration, has BashJavaUtils turn its memory settings into JVM flags and the dynamic
// properties the process requires, and starts the JVM with them.
func launchJVM(s jvmSpec) (*process, error) {
	confDir := filepath.Join(s.dir, "conf-"+s.name)
	if err := writeConf(confDir, s.dist, s.conf, s.log4j); err != nil {
		return nil, err
	}
	jvmParams, dynamic, err := resourceParams(s.java, s.classpath, s.dist, s.resourceCommand, confDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(s.dir, "log"), 0o755); err != nil {
		return nil, err
	}
	logFile := filepath.Join(s.dir, "log", s.name+".log")
	args := append([]string{}, jvmParams...)
	args = append(args, jvmOptions...)
	args = append(args,
		"-Dlog.file="+logFile,
		"-Dlog4j.configuration=file:"+filepath.Join(confDir, "log4j.properties"),
		"-Dlog4j.configurationFile=file:"+filepath.Join(confDir, "log4j.properties"),
		"-classpath", s.classpath, s.mainClass, "--configDir", confDir)
	args = append(args, dynamic...)
	cmd := exec.Command(s.java, args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "FLINK_CONF_DIR="+confDir, "FLINK_HOME="+s.dist.Home,
		"FLINK_LIB_DIR="+filepath.Join(s.dist.Home, "lib"), "FLINK_PLUGINS_DIR="+filepath.Join(s.dist.Home, "plugins"))
	cmd.Env = append(cmd.Env, s.env...)
	return startProcess(s.name, cmd, logFile, filepath.Join(s.dir, "log", s.name+".out"))
}

// resourceParams runs BashJavaUtils as config.sh does: its last two result lines are the JVM's
// memory flags and the dynamic properties ("-D key=value ...") that pin the memory the process may
// use.
func resourceParams(java, classpath string, d Dist, command, confDir string) (jvm, dynamic []string, err error) {
	cp := filepath.Join(d.Home, "bin", "bash-java-utils.jar") + string(os.PathListSeparator) + classpath
	cmd := exec.Command(java, "-classpath", cp, "org.apache.flink.runtime.util.bash.BashJavaUtils",
		command, "--configDir", confDir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, nil, fmt.Errorf("BashJavaUtils %s: %w\n%s", command, err, out)
	}
	const prefix = "BASH_JAVA_UTILS_EXEC_RESULT:"
	var results []string
	for _, line := range strings.Split(string(out), "\n") {
		if r, ok := strings.CutPrefix(line, prefix); ok {
			results = append(results, strings.TrimSpace(r))
		}
	}
	if len(results) < 2 {
		return nil, nil, fmt.Errorf("BashJavaUtils %s gave %d results, want 2:\n%s", command, len(results), out)
	}
	return strings.Fields(results[len(results)-2]), strings.Fields(results[len(results)-1]), nil
}

func writeConf(dir string, d Dist, conf map[string]string, log4j []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if log4j == nil {
		var err error
		if log4j, err = os.ReadFile(filepath.Join(d.Home, "conf", "log4j.properties")); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "log4j.properties"), log4j, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(renderConfig(conf)), 0o644)
}

func (c *Cluster) awaitTaskManagers(n int, timeout time.Duration) error {
	api := client.New(client.Config{GetTimeout: 5 * time.Second}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last string
	for {
		for _, p := range c.processes() {
			if ended, err := p.exited(); ended {
				return fmt.Errorf("%s exited: %v", p.name, err)
			}
		}
		o, err := api.GetClusterOverview(ctx, c.URL)
		switch {
		case err != nil:
			last = err.Error()
		case o.TaskManagers >= n && o.SlotsTotal >= n*c.opts.Slots:
			return nil
		default:
			last = fmt.Sprintf("%d TaskManagers, %d slots", o.TaskManagers, o.SlotsTotal)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("after %s: %s", timeout, last)
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// stop ends every process (SIGTERM, then SIGKILL after a few seconds) and, when the test failed,
// keeps the logs where the report says.
func (c *Cluster) stop() {
	c.stats.stop()
	var wg sync.WaitGroup
	for _, p := range c.processes() {
		if p == nil {
			continue
		}
		wg.Add(1)
		go func(p *process) { defer wg.Done(); p.stop(5 * time.Second) }(p)
	}
	wg.Wait()
	if c.t.Failed() {
		c.t.Logf("Flink %s logs:\n%s", c.Dist.Version, c.logTails())
		if kept, err := keepLogs(c.Dir); err == nil {
			c.t.Logf("the cluster's logs are kept in %s", kept)
		}
	}
}

func (c *Cluster) logTails() string {
	var b strings.Builder
	for _, p := range c.processes() {
		if p != nil {
			b.WriteString(p.tail(60))
		}
	}
	return b.String()
}

// keepLogs copies the log directory out of the test's temporary directory, which is removed.
func keepLogs(dir string) (string, error) {
	kept, err := os.MkdirTemp("", "flinkfsm-realflink-logs-")
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(filepath.Join(dir, "log"))
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, "log", e.Name()))
		if err == nil {
			_ = os.WriteFile(filepath.Join(kept, e.Name()), raw, 0o644)
		}
	}
	return kept, nil
}

func javaBinary(java string) string {
	if java != "" {
		return java
	}
	if home := os.Getenv("JAVA_HOME"); home != "" {
		return filepath.Join(home, "bin", "java")
	}
	return "java"
}

// freePort asks the kernel for a free loopback port. Another process may take it before Flink
// binds it; the cluster then fails to start, which says so.
func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// renderConfig writes Flink configuration as config.yaml, one flattened key a line, every value a
// double-quoted string: Flink 1.19 and later read both that and the nested form, and convert
// strings to each option's type.
func renderConfig(conf map[string]string) string {
	keys := make([]string, 0, len(conf))
	for k := range conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, strconv.Quote(conf[k]))
	}
	return b.String()
}
