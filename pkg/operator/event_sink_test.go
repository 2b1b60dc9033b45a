package operator

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
)

// slowSink is an API server that takes a few milliseconds per Event and counts what it got.
type slowSink struct {
	mu    sync.Mutex
	names map[string]bool
}

func (s *slowSink) Create(e *corev1.Event) (*corev1.Event, error) {
	time.Sleep(5 * time.Millisecond)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names[e.InvolvedObject.Name] = true
	return e, nil
}

func (s *slowSink) Update(e *corev1.Event) (*corev1.Event, error) { return e, nil }

func (s *slowSink) Patch(e *corev1.Event, _ []byte) (*corev1.Event, error) { return e, nil }

func (s *slowSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.names)
}

// A burst of Events, as a large fleet deploying together emits, reaches the API server whole:
// sent one at a time, as client-go's broadcaster does, the Events beyond its queue were dropped.
func TestABurstOfEventsIsNotDropped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := &slowSink{names: map[string]bool{}}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(newParallelSink(ctx, got))
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "flinkfsm"})
	// 5,000 Events in half a second: far more than the operator emits, and 2.5 times what one
	// request at a time could send in the test's 10 s at 5 ms each.
	const burst = 5000
	for i := range burst {
		if i%10 == 0 {
			time.Sleep(time.Millisecond)
		}
		// One object each: the broadcaster's spam filter keeps 25 Events per object.
		recorder.Event(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Name: fmt.Sprintf("app-%04d", i)}}, corev1.EventTypeNormal, "ClusterCreated", "created")
	}
	assert.Eventually(t, func() bool { return got.count() == burst }, 10*time.Second, 50*time.Millisecond,
		"Events recorded")
	t.Logf("%d of %d Events recorded", got.count(), burst)
}
