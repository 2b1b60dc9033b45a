package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/flinkfsm/flinkfsm/integ/testkit"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// The bad-input suite: invalid and hostile manifests of every kind, each refused where it can be —
// at apply time by the schema and its CEL rules, with the field named, or else by the operator
// before it creates anything, DeployFailed with the field named — while an application beside them
// runs on undisturbed.

var resources = map[string]schema.GroupVersionResource{
	"FlinkApplication":    v1beta1.SchemeGroupVersion.WithResource("flinkapplications"),
	"FlinkSessionCluster": v1beta1.SchemeGroupVersion.WithResource("flinksessionclusters"),
	"FlinkSessionJob":     v1beta1.SchemeGroupVersion.WithResource("flinksessionjobs"),
}

// hostile is one bad manifest: a valid one of the kind changed by edit.
type hostile struct {
	kind, name string
	edit       func(obj map[string]interface{})
	// refusedAt is "apply" (the API server refuses it), "deploy" (DeployFailed before anything runs)
	// or "ingress" (the job runs, without the Flink UI Ingress it asks for, and status says why).
	refusedAt string
	// names is what the refusal must say: the field, or the value at fault.
	names string
}

func put(value interface{}, path ...string) func(map[string]interface{}) {
	return func(obj map[string]interface{}) { _ = unstructured.SetNestedField(obj, value, path...) }
}

func conf(key string, value interface{}) func(map[string]interface{}) {
	return func(obj map[string]interface{}) {
		c, _, _ := unstructured.NestedMap(obj, "spec", "flinkConfig")
		if c == nil {
			c = map[string]interface{}{}
		}
		c[key] = value
		_ = unstructured.SetNestedMap(obj, c, "spec", "flinkConfig")
	}
}

func flinkPropertiesIn(component string) func(map[string]interface{}) {
	return put([]interface{}{map[string]interface{}{"name": "FLINK_PROPERTIES", "value": "rest.port: 1"}}, "spec", component, "envConfig", "env")
}

func both(edits ...func(map[string]interface{})) func(map[string]interface{}) {
	return func(obj map[string]interface{}) {
		for _, e := range edits {
			e(obj)
		}
	}
}

func hostileManifests(jar string) []hostile {
	const past32 = int64(1) << 32
	app, cluster, job := "FlinkApplication", "FlinkSessionCluster", "FlinkSessionJob"
	memory := func(q interface{}) func(map[string]interface{}) {
		return put(map[string]interface{}{"requests": map[string]interface{}{"memory": q}}, "spec", "taskManagerConfig", "resources")
	}
	cases := []hostile{
		// Numbers the API server would store but no Go client decodes, or Flink cannot run.
		{app, "parallelism-zero", put(int64(0), "spec", "parallelism"), "apply", "spec.parallelism"},
		{app, "parallelism-past-int32", put(past32, "spec", "parallelism"), "apply", "spec.parallelism"},
		{app, "parallelism-past-flink", put(int64(32769), "spec", "parallelism"), "apply", "spec.parallelism"},
		{app, "slots-past-int32", put(past32, "spec", "taskManagerConfig", "taskSlots"), "apply", "spec.taskManagerConfig.taskSlots"},
		{app, "jm-replicas-past-int32", put(past32, "spec", "jobManagerConfig", "replicas"), "apply", "spec.jobManagerConfig.replicas"},
		{app, "readiness-past-int32", put(past32, "spec", "readinessTimeoutSeconds"), "apply", "spec.readinessTimeoutSeconds"},
		{app, "restore-age-past-int32", put(past32, "spec", "maxCheckpointRestoreAgeSeconds"), "apply", "spec.maxCheckpointRestoreAgeSeconds"},
		{app, "min-checkpoints-past", put(past32, "spec", "blueGreen", "minCheckpoints"), "apply", "spec.blueGreen.minCheckpoints"},
		{app, "volume-mode-past-int32", put([]interface{}{map[string]interface{}{"name": "s",
			"secret": map[string]interface{}{"secretName": "s", "defaultMode": past32}}}, "spec", "volumes"), "apply", "defaultMode"},
		{app, "run-as-user-past-int64", put(1e19, "spec", "securityContext", "runAsUser"), "apply", "spec.securityContext.runAsUser"},
		{app, "ui-port-zero", put(int64(0), "spec", "uiPort"), "apply", "spec.uiPort"},
		{app, "rpc-port-past-65535", put(int64(70000), "spec", "rpcPort"), "apply", "spec.rpcPort"},
		// Enums and contradictions.
		{app, "delete-mode-unknown", put("Later", "spec", "deleteMode"), "apply", "spec.deleteMode"},
		{app, "upgrade-mode-unknown", put("Sometimes", "spec", "upgradeMode"), "apply", "spec.upgradeMode"},
		{app, "state-unknown", put("Paused", "spec", "state"), "apply", "spec.state"},
		{app, "deployment-mode-unknown", put("Canary", "spec", "deploymentMode"), "apply", "spec.deploymentMode"},
		{app, "scale-mode-unknown", put("Sideways", "spec", "scaleMode"), "apply", "spec.scaleMode"},
		{app, "savepoint-disabled-with-savepoint", both(put(true, "spec", "savepointDisabled"), put("Savepoint", "spec", "upgradeMode")), "apply", "savepointDisabled"},
		{app, "in-place-blue-green", both(put("InPlace", "spec", "scaleMode"), put("BlueGreen", "spec", "deploymentMode")), "apply", "InPlace"},
		{app, "no-image", func(obj map[string]interface{}) { unstructured.RemoveNestedField(obj, "spec", "image") }, "apply", "spec.image"},
		// Names the operator derives object names from.
		{app, strings.Repeat("a", 55), nil, "apply", "metadata.name"},
		{app, "1wordcount", nil, "apply", "metadata.name"},
		// Memory and images that would render a cluster that cannot run.
		{app, "memory-one-byte", memory("1"), "apply", "memory"},
		{app, "memory-integer", memory(int64(1000)), "apply", "memory"},
		{app, "image-uppercase", put("Flink:1.20", "spec", "image"), "apply", "spec.image"},
		{app, "image-space", put("flink 1.20", "spec", "image"), "apply", "spec.image"},
		{app, "image-url", put("https://registry.example.com/flink:1.20", "spec", "image"), "apply", "spec.image"},
		{app, "image-empty-tag", put("flink:", "spec", "image"), "apply", "spec.image"},
		// Flink configuration that would take over what the operator owns: refused before anything is created.
		{app, "key-trailing-space", conf("rest.port ", "1"), "deploy", `"rest.port "`},
		{app, "key-colon", conf("rest.port:x", "1"), "deploy", `"rest.port:x"`},
		{app, "key-hash", conf("rest.port#x", "1"), "deploy", `"rest.port#x"`},
		{app, "key-leading-space", conf(" jobmanager.rpc.address", "evil"), "deploy", "jobmanager.rpc.address"},
		{app, "owned-rest-port", conf("rest.port", "1"), "deploy", "spec.uiPort"},
		{app, "owned-rpc-port", conf("jobmanager.rpc.port", "1"), "deploy", "spec.rpcPort"},
		{app, "owned-blob-port", conf("blob.server.port", "1"), "deploy", "spec.blobPort"},
		{app, "owned-slots", conf("taskmanager.numberOfTaskSlots", "99"), "deploy", "spec.taskManagerConfig.taskSlots"},
		{app, "owned-tm-host", conf("taskmanager.host", "evil"), "deploy", "taskmanager.host"},
		{app, "owned-ha-cluster-id", both(conf("high-availability.type", "kubernetes"), conf("high-availability.storageDir", "file:///flink/ha"),
			conf("high-availability.cluster-id", "shared")), "deploy", "high-availability.cluster-id"},
		{app, "owned-k8s-cluster-id", both(conf("high-availability.type", "kubernetes"), conf("high-availability.storageDir", "file:///flink/ha"),
			conf("kubernetes.cluster-id", "shared")), "deploy", "kubernetes.cluster-id"},
		{app, "value-with-newline", conf("pipeline.name", "x\nrest.port: 1"), "deploy", "pipeline.name"},
		{app, "flink-properties-jm", flinkPropertiesIn("jobManagerConfig"), "deploy", "jobManagerConfig.envConfig.env[0]"},
		{app, "flink-properties-tm", flinkPropertiesIn("taskManagerConfig"), "deploy", "taskManagerConfig.envConfig.env[0]"},
		{app, "jm-replicas-without-ha", put(int64(2), "spec", "jobManagerConfig", "replicas"), "deploy", "jobManagerConfig.replicas"},
		{app, "savepoint-mode-without-dir", func(obj map[string]interface{}) {
			c, _, _ := unstructured.NestedMap(obj, "spec", "flinkConfig")
			delete(c, "state.savepoints.dir")
			_ = unstructured.SetNestedMap(obj, c, "spec", "flinkConfig")
		}, "deploy", "state.savepoints.dir"},
		// Pods beyond the restricted profile, refused by the ValidatingAdmissionPolicy of deploy/.
		{app, "host-path", put([]interface{}{map[string]interface{}{"name": "root", "hostPath": map[string]interface{}{"path": "/"}}}, "spec", "volumes"), "apply", "hostPath"},
		{app, "run-as-root", put(int64(0), "spec", "securityContext", "runAsUser"), "apply", "spec.securityContext"},
		{app, "run-as-root-group", put(int64(0), "spec", "securityContext", "runAsGroup"), "apply", "spec.securityContext"},
		{app, "root-allowed", put(false, "spec", "securityContext", "runAsNonRoot"), "apply", "spec.securityContext"},
		{app, "sysctls", put([]interface{}{map[string]interface{}{"name": "net.core.somaxconn", "value": "1024"}}, "spec", "securityContext", "sysctls"), "apply", "sysctls"},
		{app, "foreign-service-account", put("operator-admin", "spec", "serviceAccountName"), "apply", "spec.serviceAccountName"},
		// Where the pods can land: a toleration of the control-plane taint is refused whatever the
		// pods select (every taint tolerated, the node named by its hostname or by matchFields).
		{app, "tolerate-every-taint-by-hostname", both(put([]interface{}{map[string]interface{}{"operator": "Exists"}}, "spec", "jobManagerConfig", "tolerations"),
			put(map[string]interface{}{"kubernetes.io/hostname": "control-plane"}, "spec", "jobManagerConfig", "nodeSelector")), "apply", "spec.jobManagerConfig.tolerations[0]"},
		{app, "template-tolerates-control-plane", put(map[string]interface{}{"spec": map[string]interface{}{
			"tolerations": []interface{}{map[string]interface{}{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}},
			"affinity": map[string]interface{}{"nodeAffinity": map[string]interface{}{"requiredDuringSchedulingIgnoredDuringExecution": map[string]interface{}{
				"nodeSelectorTerms": []interface{}{map[string]interface{}{"matchFields": []interface{}{
					map[string]interface{}{"key": "metadata.name", "operator": "In", "values": []interface{}{"control-plane"}}}}}}}}}},
			"spec", "taskManagerConfig", "podTemplate"), "apply", "spec.taskManagerConfig.podTemplate.spec.tolerations[0]"},
		// Probes and lifecycle hooks that would make the kubelet connect from the node to a host.
		{app, "probe-host", put(map[string]interface{}{"spec": map[string]interface{}{"containers": []interface{}{map[string]interface{}{
			"name": "flink-main-container", "livenessProbe": map[string]interface{}{"httpGet": map[string]interface{}{"host": "169.254.169.254", "path": "/", "port": int64(80)}}}}}},
			"spec", "podTemplate"), "apply", "spec.podTemplate.spec.containers[0].livenessProbe.httpGet.host"},
		{cluster, "tolerate-master", put([]interface{}{map[string]interface{}{"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"}},
			"spec", "taskManagerConfig", "tolerations"), "apply", "spec.taskManagerConfig.tolerations[0]"},
		{cluster, "prestop-host", put(map[string]interface{}{"spec": map[string]interface{}{"containers": []interface{}{map[string]interface{}{
			"name": "flink-main-container", "lifecycle": map[string]interface{}{"preStop": map[string]interface{}{"tcpSocket": map[string]interface{}{"host": "10.0.0.1", "port": int64(22)}}}}}}},
			"spec", "jobManagerConfig", "podTemplate"), "apply", "spec.jobManagerConfig.podTemplate.spec.containers[0].lifecycle.preStop.tcpSocket.host"},
		{cluster, "host-path", put([]interface{}{map[string]interface{}{"name": "root", "hostPath": map[string]interface{}{"path": "/"}}}, "spec", "volumes"), "apply", "hostPath"},
		{cluster, "foreign-service-account", put("operator-admin", "spec", "serviceAccountName"), "apply", "spec.serviceAccountName"},
		// The Flink UI's Ingress: plain paths at apply; hosts in the namespace's domains and only the
		// allowed annotations by the operator, which makes no Ingress and leaves the job running.
		{app, "ingress-path-walking-up", put(map[string]interface{}{"template": "ui.example.com/{{namespace}}/../admin"}, "spec", "ingress"), "apply", "spec.ingress.template"},
		{app, "ingress-path-pattern", put(map[string]interface{}{"template": "ui.example.com/.*"}, "spec", "ingress"), "apply", "spec.ingress.template"},
		{app, "ingress-host-with-port", put(map[string]interface{}{"template": "ui.example.com:8443"}, "spec", "ingress"), "apply", "spec.ingress.template"},
		{app, "ingress-foreign-host", put(map[string]interface{}{"template": "payments.other-team.flink.test"}, "spec", "ingress"), "ingress",
			"spec.ingress.template: host payments.other-team.flink.test is not in a domain the operator grants"},
		{app, "ingress-foreign-tls-host", put(map[string]interface{}{"template": "ui.{{namespace}}.flink.test",
			"tls": []interface{}{map[string]interface{}{"hosts": []interface{}{"*.other-team.flink.test"}, "secretName": "cert"}}}, "spec", "ingress"), "ingress",
			"spec.ingress.tls[0].hosts[0]"},
		{app, "ingress-server-snippet", put(map[string]interface{}{"template": "ui.{{namespace}}.flink.test",
			"annotations": map[string]interface{}{"nginx.ingress.kubernetes.io/server-snippet": "location /admin { proxy_pass http://10.0.0.1; }"}}, "spec", "ingress"), "ingress",
			"spec.ingress.annotations[nginx.ingress.kubernetes.io/server-snippet]"},
		{app, "ingress-lyft-auth-url", both(put(map[string]interface{}{"template": "ui.{{namespace}}.flink.test"}, "spec", "ingress"),
			put(map[string]interface{}{"nginx.ingress.kubernetes.io/auth-url": "http://evil.example.com/auth"}, "spec", "ingressAnnotations")), "ingress",
			"spec.ingressAnnotations[nginx.ingress.kubernetes.io/auth-url]"},
		// Session clusters.
		{cluster, "replicas-past-int32", put(past32, "spec", "taskManagerConfig", "replicas"), "apply", "spec.taskManagerConfig.replicas"},
		{cluster, "slots-overflow", both(put(int64(2147483647), "spec", "taskManagerConfig", "replicas"), put(int64(4), "spec", "taskManagerConfig", "taskSlots")), "apply", "replicas"},
		{cluster, "memory-one-kilobyte", memory("1k"), "apply", "memory"},
		{cluster, "image-empty-tag", put("flink:", "spec", "image"), "apply", "spec.image"},
		{cluster, "name.with.dots", nil, "apply", "metadata.name"},
		{cluster, "owned-rest-port", conf("rest.port", "1"), "deploy", "spec.uiPort"},
		{cluster, "key-trailing-space", conf("rest.port ", "1"), "deploy", `"rest.port "`},
		{cluster, "flink-properties", flinkPropertiesIn("jobManagerConfig"), "deploy", "FLINK_PROPERTIES"},
		// Session jobs, their jars included: the SSRF guard and the checksum.
		{job, "parallelism-past-int32", put(past32, "spec", "job", "parallelism"), "apply", "spec.job.parallelism"},
		{job, "jar-ftp", put("ftp://example.com/a.jar", "spec", "job", "jarURI"), "apply", "jarURI"},
		{job, "jar-file", put("file:///etc/passwd", "spec", "job", "jarURI"), "apply", "jarURI"},
		{job, "jar-empty", put("", "spec", "job", "jarURI"), "apply", "spec.job.jarURI"},
		{job, "sha-not-hex", put("zz", "spec", "job", "jarSHA256"), "apply", "spec.job.jarSHA256"},
		{job, "upgrade-mode-unknown", put("Sometimes", "spec", "job", "upgradeMode"), "apply", "spec.job.upgradeMode"},
		{job, "delete-mode-unknown", put("Later", "spec", "deleteMode"), "apply", "spec.deleteMode"},
		{job, "state-unknown", put("Paused", "spec", "job", "state"), "apply", "spec.job.state"},
		{job, "no-cluster-name", put("", "spec", "clusterName"), "apply", "spec.clusterName"},
		{job, "jar-private-address", put("http://10.0.0.1/a.jar", "spec", "job", "jarURI"), "deploy", "10.0.0.1"},
		{job, "jar-metadata-address", put("http://169.254.169.254/latest/a.jar", "spec", "job", "jarURI"), "deploy", "169.254.169.254"},
		{job, "jar-wrong-sha", put(strings.Repeat("0", 64), "spec", "job", "jarSHA256"), "deploy", "SHA-256"},
		{job, "jar-local-path", put("local:///etc/passwd", "spec", "job", "jarURI"), "deploy", "local://"},
		{job, "jar-not-found", put(strings.TrimSuffix(jar, "wordcount.jar")+"missing.jar", "spec", "job", "jarURI"), "deploy", "HTTP 404"},
	}
	return cases
}

// base is a valid manifest of the kind, in the scenario's namespace.
func (s *scenario) base(kind, name, jar string) map[string]interface{} {
	spec := map[string]interface{}{}
	switch kind {
	case "FlinkApplication":
		spec = map[string]interface{}{"image": testImage, "jarName": testJar, "parallelism": int64(1), "flinkVersion": "1.20",
			"deleteMode": "ForceCancel", "flinkConfig": map[string]interface{}{"state.savepoints.dir": "file:///flink/savepoints"},
			"taskManagerConfig": map[string]interface{}{"taskSlots": int64(2)}}
	case "FlinkSessionCluster":
		spec = map[string]interface{}{"image": testImage, "flinkVersion": "1.20",
			"flinkConfig":       map[string]interface{}{"state.savepoints.dir": "file:///flink/savepoints"},
			"taskManagerConfig": map[string]interface{}{"taskSlots": int64(2), "replicas": int64(1)}}
	case "FlinkSessionJob":
		spec = map[string]interface{}{"clusterName": "shared", "deleteMode": "ForceCancel",
			"job": map[string]interface{}{"jarURI": jar, "parallelism": int64(1), "upgradeMode": "Stateless"}}
	}
	return map[string]interface{}{"apiVersion": v1beta1.SchemeGroupVersion.String(), "kind": kind,
		"metadata": map[string]interface{}{"name": name, "namespace": s.ns}, "spec": spec}
}

func TestHostileManifestsAreRefusedWithTheFieldNamed(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	jar := s.jarServer()
	client, err := dynamic.NewForConfig(env.Cluster.RestConfig())
	if err != nil {
		t.Fatal(err)
	}
	// A running application beside them, which none of them may disturb, and the session cluster the
	// session jobs name.
	bystander := s.createRunning("bystander", nil)
	s.createSessionCluster("shared", nil)

	cases := hostileManifests(jar)
	if len(cases) < 60 {
		t.Fatalf("%d hostile manifests, want at least 60", len(cases))
	}
	var deployed, withoutIngress []hostile
	for _, c := range cases {
		obj := s.base(c.kind, c.name, jar)
		if c.edit != nil {
			c.edit(obj)
		}
		_, err := client.Resource(resources[c.kind]).Namespace(s.ns).Create(s.ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		switch {
		case c.refusedAt == "apply" && err == nil:
			t.Errorf("%s %s: accepted at apply time, want it refused naming %s", c.kind, c.name, c.names)
		case c.refusedAt == "apply" && !strings.Contains(err.Error(), c.names):
			t.Errorf("%s %s: refused with %q, which does not name %s", c.kind, c.name, err, c.names)
		case c.refusedAt == "deploy" && err != nil:
			t.Errorf("%s %s: refused at apply time (%v); the operator was to refuse it", c.kind, c.name, err)
		case c.refusedAt == "deploy":
			deployed = append(deployed, c)
		case c.refusedAt == "ingress" && err != nil:
			t.Errorf("%s %s: refused at apply time (%v); the operator was to refuse its Ingress", c.kind, c.name, err)
		case c.refusedAt == "ingress":
			withoutIngress = append(withoutIngress, c)
		}
	}
	t.Logf("%d hostile manifests: %d refused at apply time, %d by the operator", len(cases), len(cases)-len(deployed), len(deployed))
	for _, c := range deployed {
		var reason, phase string
		s.eventually(c.kind+" "+c.name+" DeployFailed", func() (bool, string) {
			u, err := client.Resource(resources[c.kind]).Namespace(s.ns).Get(s.ctx, c.name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			phase, _, _ = unstructured.NestedString(u.Object, "status", "phase")
			reason, _, _ = unstructured.NestedString(u.Object, "status", "reason")
			return phase == "DeployFailed", fmt.Sprintf("phase %s: %s", phase, reason)
		})
		if !strings.Contains(reason, c.names) {
			t.Errorf("%s %s: DeployFailed with %q, which does not name %s", c.kind, c.name, reason, c.names)
		}
	}
	// An Ingress refused leaves the job running, without the Ingress, and status says why.
	for _, c := range withoutIngress {
		var reason string
		s.eventually(c.kind+" "+c.name+" Running without its Ingress", func() (bool, string) {
			u, err := client.Resource(resources[c.kind]).Namespace(s.ns).Get(s.ctx, c.name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
			reason, _, _ = unstructured.NestedString(u.Object, "status", "reason")
			return phase == "Running" && strings.Contains(reason, "no Ingress for the Flink UI"), fmt.Sprintf("phase %s: %s", phase, reason)
		})
		if !strings.Contains(reason, c.names) {
			t.Errorf("%s %s: the Ingress refused with %q, which does not name %s", c.kind, c.name, reason, c.names)
		}
		if _, err := env.Kube.NetworkingV1().Ingresses(s.ns).Get(s.ctx, c.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s %s: an Ingress was made for a refused spec (%v)", c.kind, c.name, err)
		}
	}
	// Nothing was created for the refused FlinkApplications.
	for _, c := range deployed {
		if c.kind != "FlinkApplication" {
			continue
		}
		deploys, err := env.Kube.AppsV1().Deployments(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: "flink-app=" + c.name})
		if err == nil && len(deploys.Items) > 0 {
			t.Errorf("%s: %d Deployments created for a refused spec", c.name, len(deploys.Items))
		}
	}
	for _, c := range deployed {
		if c.kind == "FlinkSessionJob" {
			if n := len(s.sessionJobsOf("shared", c.name)); n != 0 {
				t.Errorf("%s: %d jobs ran for a refused jar", c.name, n)
			}
		}
	}
	// The bystander ran on, untouched.
	now, err := s.get(bystander.Name)
	if err != nil {
		t.Fatal(err)
	}
	if now.Status.Phase != v1beta1.PhaseRunning || now.Status.JobStatus.JobID != bystander.Status.JobStatus.JobID {
		t.Errorf("the bystander was disturbed: %s", testkit.Describe(now))
	}
	cleanUp(s, client, cases)
}

// cleanUp deletes what was created, so that the namespace goes quickly.
func cleanUp(s *scenario, client dynamic.Interface, cases []hostile) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, c := range cases {
		err := client.Resource(resources[c.kind]).Namespace(s.ns).Delete(ctx, c.name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			s.t.Logf("deleting %s %s: %v", c.kind, c.name, err)
		}
	}
}
