//go:build linux

package localcluster

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

func TestClusterRunsDeployments(t *testing.T) {
	c := StartForTest(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	stdout, _, err := c.Kubectl(ctx, "version", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var version struct {
		ServerVersion struct {
			GitVersion string `json:"gitVersion"`
		} `json:"serverVersion"`
	}
	if err := json.Unmarshal([]byte(stdout), &version); err != nil {
		t.Fatalf("kubectl version output does not parse: %v\n%s", err, stdout)
	}
	if version.ServerVersion.GitVersion != KubernetesVersion {
		t.Fatalf("server version %q, want %q", version.ServerVersion.GitVersion, KubernetesVersion)
	}

	client := kubernetes.NewForConfigOrDie(c.RestConfig())
	const ns = "smoke"
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "example.invalid/web:1"}}},
			},
		},
	}
	created := time.Now()
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	podList := metav1.ListOptions{LabelSelector: "app=web"}
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		d, err := client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil || d.Status.AvailableReplicas != 2 {
			return false, nil
		}
		pods, err := client.CoreV1().Pods(ns).List(ctx, podList)
		if err != nil {
			return false, nil
		}
		return countRunningReady(pods.Items) == 2, nil
	})
	if err != nil {
		t.Fatalf("deployment never had 2 available replicas with 2 running, ready pods: %v", err)
	}
	t.Logf("deployment available after %s", time.Since(created).Round(10*time.Millisecond))
	checkAddressPlan(ctx, t, client, c.Sizing(), ns, podList)

	background := metav1.DeletePropagationBackground
	deleted := time.Now()
	if err := client.AppsV1().Deployments(ns).Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		pods, err := client.CoreV1().Pods(ns).List(ctx, podList)
		return err == nil && len(pods.Items) == 0, nil
	})
	if err != nil {
		t.Fatalf("pods of the deleted deployment were not garbage collected: %v", err)
	}
	t.Logf("pods garbage collected %s after the deployment was deleted", time.Since(deleted).Round(10*time.Millisecond))

	procs := c.processes()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if left := processesMentioning(c.Dir); len(left) > 0 {
		t.Errorf("processes still running after Stop: %v", left)
	}
	for _, p := range procs {
		for _, target := range []int{p.pid(), -p.pid()} { // the process, then its group
			if err := syscall.Kill(target, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("%s (pid %d): kill(%d, 0) = %v, want ESRCH", p.name, p.pid(), target, err)
			}
		}
	}
}

func countRunningReady(pods []corev1.Pod) int {
	n := 0
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, cond := range pod.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}

// checkAddressPlan checks that the components use sizing.go's ranges: the serving certificate
// names the `kubernetes` Service's IP, and pods get IPs outside the service range.
func checkAddressPlan(ctx context.Context, t *testing.T, client kubernetes.Interface, size Sizing, ns string, podList metav1.ListOptions) {
	t.Helper()
	svc, err := client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP != serviceIP.String() {
		t.Errorf("the kubernetes Service has IP %s, the serving certificate names %s", svc.Spec.ClusterIP, serviceIP)
	}
	_, pods, _ := net.ParseCIDR(size.PodCIDR)
	list, err := client.CoreV1().Pods(ns).List(ctx, podList)
	if err != nil {
		t.Fatal(err)
	}
	for _, pod := range list.Items {
		if ip := net.ParseIP(pod.Status.PodIP); ip == nil || !pods.Contains(ip) {
			t.Errorf("pod %s has IP %q, outside the pod range %s", pod.Name, pod.Status.PodIP, size.PodCIDR)
		}
	}
}
