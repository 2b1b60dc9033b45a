package portable

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/flinkfsm/flinkfsm/deploy/helmtest"
	"github.com/flinkfsm/flinkfsm/integ/testkit"
	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
)

// startExternal connects to the cluster of $KUBECONFIG and, unless told to use the operator already
// there, installs or upgrades the operator from the chart (hack/helm.sh upgrade --install, waiting
// for its pods). It then waits until the FlinkApplication API is served.
func startExternal(ctx context.Context, t Target) (*cluster, error) {
	// The default loading rules read $KUBECONFIG, a path or a list of them, as kubectl does.
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(),
		&clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("reading KUBECONFIG=%s: %w", t.Kubeconfig, err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	apps, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	if v, err := kube.Discovery().ServerVersion(); err != nil {
		return nil, fmt.Errorf("reaching the cluster of KUBECONFIG=%s: %w", t.Kubeconfig, err)
	} else {
		fmt.Printf("portable: cluster %s at %s\n", v.GitVersion, cfg.Host)
	}
	if t.Install {
		if err := installChart(ctx, t); err != nil {
			return nil, err
		}
	}
	var last error
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, last = apps.FlinkV1beta1().FlinkApplications("default").List(ctx, metav1.ListOptions{Limit: 1})
		return last == nil, nil
	}); err != nil {
		return nil, fmt.Errorf("the FlinkApplication API is not served (is the operator installed? %s=1 expects it there): %v", EnvSkipInstall, last)
	}
	selector := "app.kubernetes.io/name=flinkfsm"
	noSharedState, err := checkStateVolume(ctx, kube, t)
	if err != nil {
		return nil, err
	}
	return &cluster{
		Kube:          kube,
		Apps:          apps,
		NoSharedState: noSharedState,
		Describe: fmt.Sprintf("the operator's logs: kubectl logs -n %s -l %s --tail=-1; the Flink pods' in each test's namespace",
			t.Namespace, selector),
		OperatorLines: func(text string, n int) string {
			return operatorPodLines(kube, t.Namespace, selector, text, n)
		},
		// Test namespaces go with their tests; the operator stays installed for the next run.
		stop: func(bool) {},
	}, nil
}

// checkStateVolume tells why the cluster cannot provision the test namespaces' state volumes, or
// "" when it can: the StorageClass the suite was given exists, or the cluster has a default one
// (kind's "standard").
func checkStateVolume(ctx context.Context, kube kubernetes.Interface, t Target) (string, error) {
	if !t.StateVolume {
		return "", nil
	}
	classes, err := kube.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("listing StorageClasses: %w", err)
	}
	for _, c := range classes.Items {
		if t.StorageClass != "" && c.Name == t.StorageClass {
			return "", nil
		}
		if t.StorageClass == "" && c.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
			return "", nil
		}
	}
	if t.StorageClass != "" {
		return fmt.Sprintf("the cluster has no StorageClass %q (%s) for the state volume", t.StorageClass, EnvStorageClass), nil
	}
	return fmt.Sprintf("the cluster has no default StorageClass for the state volume; name one with %s", EnvStorageClass), nil
}

// installChart runs `helm upgrade --install` of the chart with the target's values.
func installChart(ctx context.Context, t Target) error {
	values, err := t.ChartValues()
	if err != nil {
		return err
	}
	data, err := yaml.Marshal(values)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "flinkfsm-portable-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	valuesFile := filepath.Join(dir, "values.yaml")
	if err := os.WriteFile(valuesFile, data, 0o644); err != nil {
		return err
	}
	fmt.Printf("portable: installing the operator: helm %s\n", strings.Join(t.HelmInstallArgs(helmtest.ChartDir, valuesFile), " "))
	out, err := helmtest.Helm(ctx, t.HelmInstallArgs(helmtest.ChartDir, valuesFile)...)
	if err != nil {
		return fmt.Errorf("installing the chart (is %s loaded into the cluster? `kind load docker-image %s`): %w\n%s",
			t.OperatorImage, t.OperatorImage, err, out)
	}
	return nil
}

// operatorPodLines are the last n lines mentioning text in the logs of the operator's pods.
func operatorPodLines(kube kubernetes.Interface, namespace, selector, text string, n int) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pods, err := kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return err.Error()
	}
	var all bytes.Buffer
	for _, p := range pods.Items {
		data, err := kube.CoreV1().Pods(namespace).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			fmt.Fprintf(&all, "%s: %v\n", p.Name, err)
			continue
		}
		all.Write(data)
	}
	return testkit.LinesAbout(all.String(), text, n)
}
