package fsm

import (
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
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
	assert.True(t, SameStatus(stored, next))
	patch, err := StatusPatch(stored, next)
	require.NoError(t, err)
	assert.Nil(t, patch, "the merge patch agrees")

	next.JobStatus.LastCheckpointTime = at(1_700_000_003_000)
	assert.False(t, SameStatus(stored, next), "a second later is a change")
	next = *stored.DeepCopy()
	next.JobStatus.LastCheckpointPath = "file:///flink/checkpoints/chk-2"
	assert.False(t, SameStatus(stored, next))
}

// TestSameStatusNeverHidesAChangeTheMergePatchWouldWrite fills statuses of every kind at random:
// whenever SameStatus says a status is the stored one, the merge patch between them is empty, so
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
			patch, err := StatusPatch(a.Elem().Interface(), b.Elem().Interface())
			require.NoError(t, err)
			if SameStatus(a.Elem().Interface(), b.Elem().Interface()) {
				same++
				assert.Nil(t, patch, "%s %d: SameStatus hid %s", typ.Name(), i, patch)
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

// storedEquality is apimachinery's reflective DeepEqual with times compared as the API server
// stores them: what SameStatus did before storedEqual, kept here as its reference.
var storedEquality = conversion.EqualitiesOrDie(
	func(a, b metav1.Time) bool { return a.Truncate(time.Second).Equal(b.Truncate(time.Second)) },
	func(a, b metav1.MicroTime) bool {
		return a.Truncate(time.Microsecond).Equal(b.Truncate(time.Microsecond))
	},
)

// TestStoredEqualAgreesWithDeepEqual fills statuses of every kind at random, as copies within the
// second, a second apart, with lists and maps emptied or set to nil, and unrelated, and compares
// them as values and through pointers: storedEqual says what the reflective DeepEqual says.
func TestStoredEqualAgreesWithDeepEqual(t *testing.T) {
	fill := randfill.NewWithSeed(30).NilChance(0.3).NumElements(0, 2).MaxDepth(8).Funcs(
		func(tm *metav1.Time, c randfill.Continue) {
			*tm = metav1.NewTime(time.Unix(1_700_000_000+c.Int63n(3), c.Int63n(int64(time.Second))))
		},
		func(tm *metav1.MicroTime, c randfill.Continue) {
			*tm = metav1.NewMicroTime(time.Unix(1_700_000_000, c.Int63n(3000)))
		},
		func(s *string, c randfill.Continue) { *s = []string{"", "a", "b"}[c.Intn(3)] },
	)
	jitter := rand.New(rand.NewSource(30))
	statuses := []interface{}{&v1beta1.FlinkApplicationStatus{}, &v1beta1.FlinkSessionJobStatus{}, &v1beta1.FlinkSessionClusterStatus{}}
	same, different := 0, 0
	for _, kind := range statuses {
		typ := reflect.TypeOf(kind).Elem()
		for i := 0; i < 400; i++ {
			a, b := reflect.New(typ), reflect.New(typ)
			fill.Fill(a.Interface())
			switch i % 4 {
			case 0:
				b.Elem().Set(reflect.ValueOf(deepCopied(a.Interface())).Elem())
				jitterTimes(b, jitter, 0)
			case 1:
				b.Elem().Set(reflect.ValueOf(deepCopied(a.Interface())).Elem())
				jitterTimes(b, jitter, time.Second)
			case 2:
				b.Elem().Set(reflect.ValueOf(deepCopied(a.Interface())).Elem())
				emptyOrNil(b.Elem(), jitter)
			default:
				fill.Fill(b.Interface())
			}
			want := storedEquality.DeepEqual(a.Elem().Interface(), b.Elem().Interface())
			assert.Equal(t, want, storedEqual(a.Interface(), b.Interface()), "%s %d through pointers", typ.Name(), i)
			assert.Equal(t, want, storedEqual(a.Elem().Interface(), b.Elem().Interface()), "%s %d as values", typ.Name(), i)
			if want {
				same++
			} else {
				different++
			}
		}
	}
	assert.Greater(t, same, 400)
	assert.Greater(t, different, 400)
	assert.False(t, storedEqual(&v1beta1.FlinkApplicationStatus{}, v1beta1.FlinkApplicationStatus{}), "a pointer is not a value")
	assert.True(t, storedEqual(nil, nil))
	assert.False(t, storedEqual(nil, &v1beta1.FlinkApplicationStatus{}))
}

// emptyOrNil swaps nil and empty lists and maps wherever v holds one, at random: a reader cannot
// tell them apart, so neither may the comparison.
func emptyOrNil(v reflect.Value, r *rand.Rand) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			emptyOrNil(v.Elem(), r)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() && v.Field(i).CanSet() {
				emptyOrNil(v.Field(i), r)
			}
		}
	case reflect.Slice, reflect.Map:
		switch {
		case v.Len() == 0 && r.Intn(2) == 0:
			if v.IsNil() {
				if v.Kind() == reflect.Slice {
					v.Set(reflect.MakeSlice(v.Type(), 0, 0))
				} else {
					v.Set(reflect.MakeMap(v.Type()))
				}
			} else {
				v.Set(reflect.Zero(v.Type()))
			}
		case v.Kind() == reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				emptyOrNil(v.Index(i), r)
			}
		}
	}
}

// TestComparingStoredStatusesAllocatesNothing: a pass compares its status with the stored one on
// every poll, so through pointers the comparison costs no garbage, times included.
func TestComparingStoredStatusesAllocatesNothing(t *testing.T) {
	at := func(ms int64) *metav1.Time { t := metav1.NewTime(time.UnixMilli(ms)); return &t }
	stored := &v1beta1.FlinkApplicationStatus{Phase: v1beta1.PhaseRunning, StartedAt: at(1_700_000_000_000)}
	stored.JobStatus.StartTime = at(1_700_000_001_000)
	stored.JobStatus.LastCheckpointTime = at(1_700_000_002_000)
	stored.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, LastTransitionTime: *at(1_700_000_003_000)}}
	stored.History = []v1beta1.PhaseTransition{{To: v1beta1.PhaseRunning, Time: *at(1_700_000_004_000), Reason: "started"}}
	next := stored.DeepCopy()
	next.JobStatus.LastCheckpointTime = at(1_700_000_002_345)
	require.True(t, SameStatus(stored, next))
	assert.Zero(t, testing.AllocsPerRun(100, func() { SameStatus(stored, next) }))
}

// BenchmarkSameStatus compares a Running application's status with its stored copy, as each poll does.
func BenchmarkSameStatus(b *testing.B) {
	fill := randfill.NewWithSeed(31).NilChance(0).NumElements(2, 2).MaxDepth(8)
	stored := &v1beta1.FlinkApplicationStatus{}
	fill.Fill(stored)
	next := stored.DeepCopy()
	b.Run("storedEqual", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			SameStatus(stored, next)
		}
	})
	b.Run("DeepEqual", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			storedEquality.DeepEqual(*stored, *next)
		}
	})
}
