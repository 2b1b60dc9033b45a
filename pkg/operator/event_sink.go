package operator

import (
	"context"
	"errors"
	"hash/fnv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// eventLanes and eventLaneDepth size parallelSink: 16 requests at once, and up to 16 × 256 Events
// waiting for one, on top of the broadcaster's own queue of 1,000.
const (
	eventLanes     = 16
	eventLaneDepth = 256
	// eventTries bounds the attempts at one Event that gets no answer; an answered refusal is final.
	eventTries = 4
)

// parallelSink sends Events to the API server several at a time. client-go's broadcaster hands its
// sink one Event at a time, from one goroutine, and drops what no longer fits in its 1,000-Event
// queue: at the 100 to 150 ms an Event's POST takes on a control plane starting 1,000 applications,
// that is 7 to 10 Events a second, and the operator emits about four per deploy, so most of a large
// fleet's Events were dropped. Here each Event is queued on one of eventLanes lanes, chosen by its
// name, and the broadcaster is answered at once; a lane sends its Events in order, so the count
// updates of a repeated Event (patches to its name) follow its create.
type parallelSink struct {
	ctx   context.Context
	sink  record.EventSink
	lanes []chan func()
	retry time.Duration
}

// newParallelSink starts the lanes; they stop when ctx ends, leaving queued Events unsent, as the
// broadcaster does with its own queue.
func newParallelSink(ctx context.Context, sink record.EventSink) *parallelSink {
	s := &parallelSink{ctx: ctx, sink: sink, retry: time.Second}
	for range eventLanes {
		lane := make(chan func(), eventLaneDepth)
		s.lanes = append(s.lanes, lane)
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case send := <-lane:
					send()
				}
			}
		}()
	}
	return s
}

func (s *parallelSink) Create(e *corev1.Event) (*corev1.Event, error) {
	s.queue(e, func() (*corev1.Event, error) { return s.sink.Create(e) })
	return e, nil
}

func (s *parallelSink) Update(e *corev1.Event) (*corev1.Event, error) {
	s.queue(e, func() (*corev1.Event, error) { return s.sink.Update(e) })
	return e, nil
}

func (s *parallelSink) Patch(e *corev1.Event, patch []byte) (*corev1.Event, error) {
	s.queue(e, func() (*corev1.Event, error) {
		out, err := s.sink.Patch(e, patch)
		if apierrors.IsNotFound(err) {
			// Deleted since (Events expire): what the broadcaster does in this case.
			fresh := *e
			fresh.ResourceVersion = ""
			return s.sink.Create(&fresh)
		}
		return out, err
	})
	return e, nil
}

// queue puts a send on its Event's lane, waiting while the lane is full: the broadcaster's queue
// then holds the Events behind it.
func (s *parallelSink) queue(e *corev1.Event, send func() (*corev1.Event, error)) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(e.Namespace + "/" + e.Name))
	s.lanes[h.Sum32()%uint32(len(s.lanes))] <- func() {
		for try := 1; ; try++ {
			_, err := send()
			var status apierrors.APIStatus
			if err == nil || errors.As(err, &status) || try == eventTries {
				if err != nil {
					klog.V(2).InfoS("Event not recorded", "event", klog.KRef(e.Namespace, e.Name), "reason", e.Reason, "err", err)
				}
				return
			}
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(s.retry):
			}
		}
	}
}
