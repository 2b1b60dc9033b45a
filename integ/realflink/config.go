package realflink

import (
	"path/filepath"
	"strconv"
)

// baseConfig is every process's configuration before Options.Config: loopback addresses and the
// chosen ports, files under the cluster's directory, and memory bounded so that several clusters fit
// on a small machine (a JobManager of 640 MiB and TaskManagers of 896 MiB at most, of which the heap
// is committed only as it is used). The keys are those 1.20 introduced and 2.x kept
// (execution.checkpointing.dir and .savepoint-dir); the older state.checkpoints.dir and
// state.savepoints.dir still work on 2.3 as deprecated names.
func (c *Cluster) baseConfig(restPort, rpcPort int) map[string]string {
	dir := c.Dir
	conf := map[string]string{
		"jobmanager.rpc.address":        "127.0.0.1",
		"jobmanager.rpc.port":           strconv.Itoa(rpcPort),
		"jobmanager.bind-host":          "127.0.0.1",
		"rest.address":                  "127.0.0.1",
		"rest.bind-address":             "127.0.0.1",
		"rest.port":                     strconv.Itoa(restPort),
		"taskmanager.host":              "127.0.0.1",
		"taskmanager.bind-host":         "127.0.0.1",
		"taskmanager.numberOfTaskSlots": strconv.Itoa(c.opts.Slots),

		"io.tmp.dirs":                           filepath.Join(dir, "tmp"),
		"web.tmpdir":                            filepath.Join(dir, "tmp", "web"),
		"web.upload.dir":                        filepath.Join(dir, "jars"),
		"blob.storage.directory":                filepath.Join(dir, "tmp", "blob"),
		"execution.checkpointing.dir":           "file://" + filepath.Join(dir, "checkpoints"),
		"execution.checkpointing.savepoint-dir": "file://" + filepath.Join(dir, "savepoints"),
	}
	for k, v := range boundedMemory() {
		conf[k] = v
	}
	return conf
}

// boundedMemory sizes every memory pool of a JobManager (640 MiB at most) and of a TaskManager
// (896 MiB at most), so that several clusters fit on a small machine.
func boundedMemory() map[string]string {
	return map[string]string{
		"jobmanager.memory.process.size":       "640m",
		"jobmanager.memory.jvm-metaspace.size": "128m",
		"jobmanager.memory.jvm-overhead.min":   "64m",
		"jobmanager.memory.jvm-overhead.max":   "64m",
		"jobmanager.memory.off-heap.size":      "64m",

		"taskmanager.memory.process.size":            "896m",
		"taskmanager.memory.jvm-metaspace.size":      "128m",
		"taskmanager.memory.jvm-overhead.min":        "64m",
		"taskmanager.memory.jvm-overhead.max":        "64m",
		"taskmanager.memory.framework.heap.size":     "64m",
		"taskmanager.memory.framework.off-heap.size": "64m",
		"taskmanager.memory.network.min":             "32m",
		"taskmanager.memory.network.max":             "32m",
		"taskmanager.memory.managed.size":            "64m",
	}
}

// jvmOptions are what Flink's shipped configuration gives every process (env.java.opts.all): the
// module openings Flink needs on Java 17. The serial collector is the harness's own choice: the
// machine has two cores and several JVMs, and G1's threads would only compete.
var jvmOptions = []string{
	"-XX:+UseSerialGC",
	"--add-exports=java.base/sun.net.util=ALL-UNNAMED",
	"--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
	"--add-exports=jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED",
	"--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
	"--add-exports=jdk.compiler/com.sun.tools.javac.parser=ALL-UNNAMED",
	"--add-exports=jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED",
	"--add-exports=jdk.compiler/com.sun.tools.javac.util=ALL-UNNAMED",
	"--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
	"--add-opens=java.base/java.lang=ALL-UNNAMED",
	"--add-opens=java.base/java.net=ALL-UNNAMED",
	"--add-opens=java.base/java.io=ALL-UNNAMED",
	"--add-opens=java.base/java.nio=ALL-UNNAMED",
	"--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
	"--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
	"--add-opens=java.base/java.text=ALL-UNNAMED",
	"--add-opens=java.base/java.time=ALL-UNNAMED",
	"--add-opens=java.base/java.util=ALL-UNNAMED",
	"--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
	"--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
	"--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED",
}
