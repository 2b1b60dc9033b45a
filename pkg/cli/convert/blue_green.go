package convert

import (
	"fmt"
	"maps"
	"math"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// The Apache operator's blue/green settings (spec.configuration of a FlinkBlueGreenDeployment).
const (
	abortGracePeriodKey    = "kubernetes.operator.bluegreen.abort.grace-period"
	deletionDelayKey       = "kubernetes.operator.bluegreen.deployment-deletion.delay"
	rescheduleIntervalKey  = "kubernetes.operator.bluegreen.reconciliation.reschedule-interval"
	apacheAbortGracePeriod = 600 // seconds: the Apache operator's default of abort.grace-period
)

// blueGreen converts a FlinkBlueGreenDeployment to a FlinkApplication with deploymentMode BlueGreen
// that behaves as the Apache operator's does: each change starts a new version beside the running
// one, which replaces it by itself once its job runs stable (promotion Auto), and is torn down if
// it does not within the abort grace period; the version it replaces stops with a savepoint.
func blueGreen(meta metav1.ObjectMeta, spec *fields) ([]any, error) {
	template := spec.object("template")
	if template == nil {
		return nil, fmt.Errorf("no spec.template: a FlinkBlueGreenDeployment deploys the FlinkDeployment its template describes")
	}
	if m := template.object("metadata"); m != nil {
		// The Apache operator puts the template's labels and annotations on each colour's
		// FlinkDeployment; flinkfsm puts the application's own on its pods and objects.
		meta.Labels = merged(meta.Labels, m.stringMap("labels"))
		meta.Annotations = merged(meta.Annotations, m.stringMap("annotations"))
		m.rest()
	}
	deployment := template.object("spec")
	if deployment == nil {
		return nil, fmt.Errorf("no spec.template.spec: a FlinkBlueGreenDeployment deploys the FlinkDeployment its template describes")
	}
	if _, ok := deployment.m["job"]; !ok {
		return nil, fmt.Errorf("spec.template.spec has no job: flinkfsm's blue/green runs an application's job, not a session cluster")
	}
	objects, err := application(meta, deployment)
	if err != nil {
		return nil, err
	}
	deployment.rest()
	template.rest()
	app := objects[0].(*v1beta1.FlinkApplication)
	app.Spec.DeploymentMode = v1beta1.DeploymentModeBlueGreen
	if in := ingress(spec); in != nil {
		if app.Spec.Ingress != nil {
			spec.out.warn("spec.template.spec.ingress", "spec.ingress is the blue/green deployment's, and wins")
		}
		app.Spec.Ingress = in
	}
	app.Spec.BlueGreen = blueGreenSettings(spec)
	asTheApacheOperatorPromotes(app)
	return objects, nil
}

// blueGreenSettings converts spec.configuration.
func blueGreenSettings(spec *fields) *v1beta1.BlueGreenSpec {
	config := spec.stringMap("configuration")
	abort := int32(apacheAbortGracePeriod)
	out := &v1beta1.BlueGreenSpec{Promotion: v1beta1.PromotionAuto, TeardownMode: v1beta1.TeardownModeSavepoint, AbortAfterSeconds: &abort}
	seconds := func(key string, lo, hi int64, field string) (*int32, bool) {
		d, err := parseFlinkDuration(config[key])
		if err != nil {
			spec.out.warn("spec.configuration."+key, fmt.Sprintf("%q is not a duration; left at the Apache operator's default", config[key]))
			return nil, false
		}
		s, note := bounded(int64(math.Ceil(d.Seconds())), lo, hi, field)
		if note != "" {
			spec.out.warn("spec.configuration."+key, note)
		}
		return ptrTo(int32(s)), true
	}
	for _, key := range slices.Sorted(maps.Keys(config)) {
		switch key {
		case abortGracePeriodKey:
			if s, ok := seconds(key, 1, 604800, "blueGreen.abortAfterSeconds"); ok {
				out.AbortAfterSeconds = s
			}
		case deletionDelayKey:
			if s, ok := seconds(key, 0, 604800, "blueGreen.teardownDelaySeconds"); ok && *s > 0 {
				out.TeardownDelaySeconds = s
			}
		case rescheduleIntervalKey:
			spec.out.warn("spec.configuration."+key, "how often the Apache operator looks again; flinkfsm watches the application and its cluster")
		default:
			spec.out.warn("spec.configuration."+key, "not a blue/green setting flinkfsm knows; left out")
		}
	}
	return out
}

func merged(own, template map[string]string) map[string]string {
	if len(template) == 0 {
		return own
	}
	out := maps.Clone(template)
	maps.Copy(out, own)
	return out
}

func ptrTo[T any](v T) *T { return &v }

// asTheApacheOperatorPromotes fits flinkfsm's gate and teardown to what the job can do, as the
// Apache operator, which promotes a version once it is ready and deletes the other without a
// savepoint unless its upgrade mode keeps state: a job that does not checkpoint passes the gate
// without a checkpoint (minCheckpoints 0; the gate's default of 1 would abort every update), and a
// version that cannot take a savepoint (upgradeMode Stateless, or no savepoint directory) is torn
// down by a cancel (a Savepoint teardown would fail, and leave both versions running).
func asTheApacheOperatorPromotes(app *v1beta1.FlinkApplication) {
	config, _ := app.Spec.FlinkConfig.Strings()
	if _, ok := config["execution.checkpointing.interval"]; !ok {
		app.Spec.BlueGreen.MinCheckpoints = ptrTo(int32(0))
	}
	_, dir := config["state.savepoints.dir"]
	_, dir2 := config["execution.checkpointing.savepoint-dir"]
	if app.Spec.UpgradeMode == v1beta1.UpgradeModeStateless || !dir && !dir2 {
		app.Spec.BlueGreen.TeardownMode = v1beta1.TeardownModeForceCancel
	}
}
