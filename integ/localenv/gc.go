package localenv

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// WaitForGarbageCollector returns once the garbage collector can delete what a deleted
// FlinkApplication owned. kube-controller-manager discovers resource types every 30 s, so for up to
// 30 s after Start installed the CRD it cannot look FlinkApplications up; it then retries each
// application it meets with exponential backoff, and an application created and deleted in that
// window keeps its cluster for up to a minute more. Call this before creating applications whose
// deletion must be prompt.
//
// Each probe is a ConfigMap owned by a FlinkApplication that never existed: the garbage collector
// deletes it as soon as it can look the owner up. A new probe every second is a new owner with no
// backoff of its own, and no FlinkApplication is created, so the running operator is not disturbed.
func (e *Env) WaitForGarbageCollector(ctx context.Context) error {
	ns, err := e.Kube.CoreV1().Namespaces().Create(ctx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "localenv-gc-probe-"}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	defer func() {
		_ = e.Kube.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	}()
	configMaps := e.Kube.CoreV1().ConfigMaps(ns.Name)
	began := time.Now()
	var probes []string
	for i := 0; ; i++ {
		probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("probe-%d", i), Namespace: ns.Name,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1beta1.SchemeGroupVersion.String(),
				Kind: "FlinkApplication", Name: fmt.Sprintf("absent-%d", i), UID: uuid.NewUUID()}},
		}}
		if _, err := configMaps.Create(ctx, probe, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("probing the garbage collector: %w", err)
		}
		probes = append(probes, probe.Name)
		for next := time.Now().Add(time.Second); time.Now().Before(next); {
			for _, p := range probes {
				if _, err := configMaps.Get(ctx, p, metav1.GetOptions{}); apierrors.IsNotFound(err) {
					e.logf("garbage collector handles FlinkApplication owners (waited %s)", time.Since(began).Round(100*time.Millisecond))
					return nil
				}
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("the garbage collector did not delete what an absent FlinkApplication owned: %w", ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}
