package flink

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The HA ConfigMaps real Flink 2.3.0 wrote for cluster id ha-ba25a31b (integ/realflink,
// TestAJobManagerKilledUnderHAIsRecoveredByFlinkAndItsConfigMapsAreCleanedUp): labelled app and
// type only. Flink 1.x adds configmap-type=high-availability; 2.x does not.
var flink23HAConfigMaps = []metav1.ObjectMeta{
	{Name: "ha-ba25a31b-cluster-config-map", Labels: map[string]string{"app": "ha-ba25a31b", "type": "flink-native-kubernetes"}},
	{Name: "ha-ba25a31b-08496751d2f93642b46b0b944f915b69-config-map", Labels: map[string]string{"app": "ha-ba25a31b", "type": "flink-native-kubernetes"}},
}

func TestTheHAConfigMapsOfFlink2AreSelectedAndTold(t *testing.T) {
	selector, err := labels.Parse(HAConfigMapSelector)
	assert.NoError(t, err)
	for _, m := range flink23HAConfigMaps {
		assert.True(t, selector.Matches(labels.Set(m.Labels)), "the informer selects %s", m.Name)
		owner, hash, ok := HAConfigMapCluster(&m)
		assert.True(t, ok, m.Name)
		assert.Equal(t, "ha", owner, m.Name)
		assert.Equal(t, "ba25a31b", hash, m.Name)
	}
}

func TestTheHAConfigMapsOfFlink1AreStillTold(t *testing.T) {
	m := metav1.ObjectMeta{Name: "wc-0123abcd-cluster-config-map",
		Labels: map[string]string{"app": "wc-0123abcd", "type": "flink-native-kubernetes", "configmap-type": "high-availability"}}
	owner, hash, ok := HAConfigMapCluster(&m)
	assert.True(t, ok)
	assert.Equal(t, "wc", owner)
	assert.Equal(t, "0123abcd", hash)
}

// Only what Flink made for the operator's cluster id, under its name, counts.
func TestOtherConfigMapsAreNoHAConfigMapsOfTheOperatorsClusters(t *testing.T) {
	for _, m := range []metav1.ObjectMeta{
		{Name: "wc-0123abcd-cluster-config-map", Labels: map[string]string{"app": "wc-0123abcd"}},                                              // not Flink's
		{Name: "flink-config-wc-0123abcd", Labels: map[string]string{"app": "wc-0123abcd", "type": "flink-native-kubernetes"}},                 // not under the cluster id
		{Name: "orders-cluster-config-map", Labels: map[string]string{"app": "orders", "type": "flink-native-kubernetes"}},                     // not the operator's form
		{Name: "wc-0123abcd-x", Labels: map[string]string{"app": "wc-0123abcd", "type": "flink-native-kubernetes", "configmap-type": "other"}}, // another 1.x kind
	} {
		_, _, ok := HAConfigMapCluster(&m)
		assert.False(t, ok, m.Name)
	}
}
