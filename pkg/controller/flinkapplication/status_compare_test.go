package flinkapplication

import (
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/randfill"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

func TestAStatusThatDiffersOnlyBelowASecondIsTheStoredOne(t *testing.T) {
	at := func(ms int64) *metav1.Time { t := metav1.NewTime(time.UnixMilli(ms)); return &t }
	stored := v1beta1.FlinkApplicationStatus{Phase: v1beta1.PhaseRunning, StartedAt: at(1_700_000_000_000)}
	stored.JobStatus.StartTime = at(1_700_000_001_000)
	stored.JobStatus.LastCheckpointTime = at(1_700_000_002_000)

	next := *stored.DeepCopy()
	next.JobStatus.StartTime = at(1_700_000_001_234) // Flink's milliseconds, stored without them
	next.JobStatus.LastCheckpointTime = at(1_700_000_002_999)
	assert.True(t, sameStatus(stored, next))
	patch, err := statusPatch(stored, next)
	require.NoError(t, err)
	assert.Nil(t, patch, "the merge patch agrees")

	next.JobStatus.LastCheckpointTime = at(1_700_000_003_000)
	assert.False(t, sameStatus(stored, next), "a second later is a change")
	next = *stored.DeepCopy()
	next.JobStatus.LastCheckpointPath = "file:///flink/checkpoints/chk-2"
	assert.False(t, sameStatus(stored, next))
}

// TestSameStatusNeverHidesAChangeTheMergePatchWouldWrite fills statuses of every kind at random:
// whenever sameStatus says a status is the stored one, the merge patch between them is empty, so
// that skipping it never loses a write.
func TestSameStatusNeverHidesAChangeTheMergePatchWouldWrite(t *testing.T) {
	fill := randfill.NewWithSeed(29).NilChance(0.3).NumElements(1, 2).MaxDepth(8).Funcs(
		func(tm *metav1.Time, c randfill.Continue) {
			*tm = metav1.NewTime(time.Unix(1_700_000_000+c.Int63n(3), c.Int63n(int64(time.Second))))
		},
		func(s *string, c randfill.Continue) { *s = []string{"", "a", "b"}[c.Intn(3)] },
	)
	jitter := rand.New(rand.NewSource(29))
	statuses := []interface{}{&v1beta1.FlinkApplicationStatus{}, &v1beta1.FlinkSessionJobStatus{}, &v1beta1.FlinkSessionClusterStatus{}}
	same, different := 0, 0
	for _, kind := range statuses {
		typ := reflect.TypeOf(kind).Elem()
		for i := 0; i < 300; i++ {
			a, b := reflect.New(typ), reflect.New(typ)
			fill.Fill(a.Interface())
			switch i % 3 {
			case 0: // Flink's milliseconds: the same status
				b.Elem().Set(reflect.ValueOf(deepCopied(a.Interface())).Elem())
				jitterTimes(b, jitter, 0)
			case 1: // a second later: another status wherever it holds a time
				b.Elem().Set(reflect.ValueOf(deepCopied(a.Interface())).Elem())
				jitterTimes(b, jitter, time.Second)
			default:
				fill.Fill(b.Interface())
			}
			patch, err := statusPatch(a.Elem().Interface(), b.Elem().Interface())
			require.NoError(t, err)
			if sameStatus(a.Elem().Interface(), b.Elem().Interface()) {
				same++
				assert.Nil(t, patch, "%s %d: sameStatus hid %s", typ.Name(), i, patch)
			} else {
				different++
			}
		}
	}
	assert.Greater(t, same, 250, "copies within the second are the same")
	assert.Greater(t, different, 300)
}

// deepCopied calls the generated DeepCopy of a status pointer.
func deepCopied(status interface{}) interface{} {
	return reflect.ValueOf(status).MethodByName("DeepCopy").Call(nil)[0].Interface()
}

// jitterTimes moves every time in v by shift, and within its second, as Flink's milliseconds do.
func jitterTimes(v reflect.Value, r *rand.Rand, shift time.Duration) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			jitterTimes(v.Elem(), r, shift)
		}
	case reflect.Struct:
		if tm, ok := v.Addr().Interface().(*metav1.Time); ok {
			*tm = metav1.NewTime(tm.Truncate(time.Second).Add(shift + time.Duration(r.Int63n(int64(time.Second)))))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				jitterTimes(v.Field(i), r, shift)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			jitterTimes(v.Index(i), r, shift)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			jitterTimes(e, r, shift)
			v.SetMapIndex(k, e)
		}
	}
}
