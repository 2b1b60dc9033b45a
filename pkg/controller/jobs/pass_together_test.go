package jobs

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// meetingFlink answers each read only once want reads are in flight together, or refuses it after
// a while: reads asked one after the other never meet.
type meetingFlink struct {
	client.API
	want    int32
	arrived atomic.Int32
	asked   sync.Map // call → count
	all     chan struct{}
	once    sync.Once
}

func newMeetingFlink(want int32) *meetingFlink {
	return &meetingFlink{want: want, all: make(chan struct{})}
}

var errAlone = errors.New("asked alone: the other reads were not in flight")

func (f *meetingFlink) meet(call string) error {
	n, _ := f.asked.LoadOrStore(call, new(atomic.Int32))
	n.(*atomic.Int32).Add(1)
	if f.arrived.Add(1) >= f.want {
		f.once.Do(func() { close(f.all) })
	}
	select {
	case <-f.all:
		return nil
	case <-time.After(5 * time.Second):
		return errAlone
	}
}

func (f *meetingFlink) times(call string) int32 {
	n, ok := f.asked.Load(call)
	if !ok {
		return 0
	}
	return n.(*atomic.Int32).Load()
}

func (f *meetingFlink) GetJob(_ context.Context, _, jobID string) (*client.JobDetails, error) {
	if err := f.meet("job"); err != nil {
		return nil, err
	}
	return &client.JobDetails{JID: jobID, State: client.JobRunning}, nil
}

func (f *meetingFlink) GetCheckpoints(context.Context, string, string) (*client.CheckpointStats, error) {
	if err := f.meet("checkpoints"); err != nil {
		return nil, err
	}
	return &client.CheckpointStats{}, nil
}

func (f *meetingFlink) GetClusterOverview(context.Context, string) (*client.ClusterOverview, error) {
	if err := f.meet("overview"); err != nil {
		return nil, err
	}
	return &client.ClusterOverview{TaskManagers: 2}, nil
}

func togetherPass(api client.API) *Pass {
	return NewPass(context.Background(), api, time.Now(), Clusters{URL: func(string) string { return "http://jm" }})
}

func TestReadsAskedTogetherAreInFlightAtOnce(t *testing.T) {
	flink := newMeetingFlink(3)
	p := togetherPass(flink)
	ref := p.Ref("c", "j1")
	p.Together(
		func() { p.View("c", "j1") },
		func() { _, _ = p.Checkpoints(ref) },
		func() { _, _ = p.Overview("c") },
	)
	v := p.View("c", "j1")
	require.NoError(t, v.Err)
	assert.Equal(t, client.JobRunning, v.State())
	_, err := p.Checkpoints(ref)
	assert.NoError(t, err)
	_, err = p.Overview("c")
	assert.NoError(t, err)
	assert.Same(t, v, p.Seen("c", "j1"))
	for _, call := range []string{"job", "checkpoints", "overview"} {
		assert.EqualValues(t, 1, flink.times(call), "%s asked once: the pass keeps what Together read", call)
	}
}

func TestOneQuestionAskedTwiceTogetherGoesToFlinkOnce(t *testing.T) {
	flink := newMeetingFlink(1)
	p := togetherPass(flink)
	p.Together(func() { p.View("c", "j1") }, func() { p.View("c", "j1") }, func() { p.View("c", "j1") })
	assert.EqualValues(t, 1, flink.times("job"))
	assert.Equal(t, client.JobRunning, p.View("c", "j1").State())
}

func TestAReadThatPanicsInTogetherPanicsItsCallerAfterTheOthers(t *testing.T) {
	flink := newMeetingFlink(1)
	p := togetherPass(flink)
	var viewed atomic.Bool
	assert.PanicsWithValue(t, "boom", func() {
		p.Together(func() { panic("boom") }, func() { p.View("c", "j1"); viewed.Store(true) })
	}, "the caller's own read panics as it would have alone")
	assert.True(t, viewed.Load(), "the other read ended before the panic reached the caller")

	defer func() {
		v := recover()
		require.NotNil(t, v, "a panic on another goroutine reaches the caller, not the process")
		assert.Contains(t, v, "late")
		assert.Contains(t, v, "pass_together_test.go", "with the stack it panicked on")
	}()
	p.Together(func() { p.View("c", "j2") }, func() { panic("late") })
}
