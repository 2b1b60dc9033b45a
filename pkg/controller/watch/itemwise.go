package watch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
	appscheme "github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned/scheme"
	appinformers "github.com/flinkfsm/flinkfsm/pkg/client/informers/externalversions/app/v1beta1"
)

// The operator's own kinds are listed and watched item by item. A typed list decodes the whole
// response at once, so one object that does not decode (stored before the schema bounded its
// integers, or by a newer version) failed the list of its namespace, or of every namespace, and
// every application the operator runs stopped with it. Here each object is decoded alone: one that
// does not decode is left out of the cache and reported, and the rest keep reconciling.

// ownResource is one of the operator's kinds as its informer lists and watches it.
type ownResource struct {
	name      string // the kind, for messages and Events
	resource  string
	newObject func() runtime.Object
	newList   func() runtime.Object
	// typed is the generated informer, for clientsets without a REST client (the fakes of unit tests).
	typed func(c versioned.Interface, namespace string, indexers cache.Indexers, tweak func(*metav1.ListOptions)) cache.SharedIndexInformer
}

var (
	applicationResource = ownResource{v1beta1.FlinkApplicationKind, "flinkapplications",
		func() runtime.Object { return &v1beta1.FlinkApplication{} },
		func() runtime.Object { return &v1beta1.FlinkApplicationList{} },
		func(c versioned.Interface, ns string, ix cache.Indexers, tweak func(*metav1.ListOptions)) cache.SharedIndexInformer {
			return appinformers.NewFilteredFlinkApplicationInformer(c, ns, 0, ix, tweak)
		}}
	sessionClusterResource = ownResource{v1beta1.FlinkSessionClusterKind, "flinksessionclusters",
		func() runtime.Object { return &v1beta1.FlinkSessionCluster{} },
		func() runtime.Object { return &v1beta1.FlinkSessionClusterList{} },
		func(c versioned.Interface, ns string, ix cache.Indexers, tweak func(*metav1.ListOptions)) cache.SharedIndexInformer {
			return appinformers.NewFilteredFlinkSessionClusterInformer(c, ns, 0, ix, tweak)
		}}
	snapshotResource = ownResource{v1beta1.FlinkSnapshotKind, "flinksnapshots",
		func() runtime.Object { return &v1beta1.FlinkSnapshot{} },
		func() runtime.Object { return &v1beta1.FlinkSnapshotList{} },
		func(c versioned.Interface, ns string, ix cache.Indexers, tweak func(*metav1.ListOptions)) cache.SharedIndexInformer {
			return appinformers.NewFilteredFlinkSnapshotInformer(c, ns, 0, ix, tweak)
		}}
	sessionJobResource = ownResource{v1beta1.FlinkSessionJobKind, "flinksessionjobs",
		func() runtime.Object { return &v1beta1.FlinkSessionJob{} },
		func() runtime.Object { return &v1beta1.FlinkSessionJobList{} },
		func(c versioned.Interface, ns string, ix cache.Indexers, tweak func(*metav1.ListOptions)) cache.SharedIndexInformer {
			return appinformers.NewFilteredFlinkSessionJobInformer(c, ns, 0, ix, tweak)
		}}
)

// skipFunc reports an object left out because it does not decode.
type skipFunc func(kind string, object *metav1.PartialObjectMetadata, err error)

// informer is the kind's informer in namespace ("" for all), decoding item by item. With a label
// selector it lists and watches only the objects the selector selects (the operator's shard): the
// API server leaves the others out, and sends an object that stops matching as deleted.
func (k ownResource) informer(c versioned.Interface, namespace, selector string, indexers cache.Indexers, skip skipFunc) cache.SharedIndexInformer {
	rc := c.FlinkV1beta1().RESTClient()
	if r, isREST := rc.(*rest.RESTClient); rc == nil || isREST && r == nil {
		return k.typed(c, namespace, indexers, func(o *metav1.ListOptions) { o.LabelSelector = selector })
	}
	return cache.NewSharedIndexInformer(k.listWatch(rc, namespace, selector, skip), k.newObject(), 0, indexers)
}

func (k ownResource) listWatch(rc rest.Interface, namespace, selector string, skip skipFunc) *cache.ListWatch {
	request := func(opts *metav1.ListOptions) *rest.Request {
		opts.LabelSelector = selector
		return rc.Get().NamespaceIfScoped(namespace, namespace != "").Resource(k.resource).
			VersionedParams(opts, appscheme.ParameterCodec)
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			body, err := request(&opts).Do(ctx).Raw()
			if err != nil {
				return nil, err
			}
			return k.decodeList(body, skip)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.Watch = true
			var timeout time.Duration
			if opts.TimeoutSeconds != nil {
				timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
			}
			body, err := request(&opts).Timeout(timeout).Stream(ctx)
			if err != nil {
				return nil, err
			}
			w := &itemwiseWatch{kind: k, skip: skip, body: body, result: make(chan watch.Event), done: make(chan struct{})}
			go w.run()
			return w, nil
		},
	}
}

// decodeList decodes a list response, leaving out the items that do not decode.
func (k ownResource) decodeList(body []byte, skip skipFunc) (runtime.Object, error) {
	var raw struct {
		Metadata metav1.ListMeta   `json:"metadata"`
		Items    []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("decoding the list of %ss: %w", k.name, err)
	}
	items := make([]runtime.Object, 0, len(raw.Items))
	for _, item := range raw.Items {
		obj, err := k.decode(item)
		if err != nil {
			skip(k.name, partialMetadata(item), err)
			continue
		}
		items = append(items, obj)
	}
	list := k.newList()
	if err := meta.SetList(list, items); err != nil {
		return nil, err
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	lm.SetResourceVersion(raw.Metadata.ResourceVersion)
	lm.SetContinue(raw.Metadata.Continue)
	lm.SetRemainingItemCount(raw.Metadata.RemainingItemCount)
	return list, nil
}

// decode decodes one object as the typed client does. Its kind is left empty, as in the objects the
// typed client returns.
func (k ownResource) decode(data []byte) (runtime.Object, error) {
	obj, _, err := appscheme.Codecs.UniversalDeserializer().Decode(data, nil, k.newObject())
	if err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return obj, nil
}

// stub is an object of the kind that carries only the metadata of an object that does not decode.
func (k ownResource) stub(m *metav1.PartialObjectMetadata) runtime.Object {
	obj := k.newObject()
	if a, err := meta.Accessor(obj); err == nil {
		a.SetNamespace(m.Namespace)
		a.SetName(m.Name)
		a.SetUID(m.UID)
		a.SetResourceVersion(m.ResourceVersion)
		a.SetGeneration(m.Generation)
	}
	obj.GetObjectKind().SetGroupVersionKind(v1beta1.SchemeGroupVersion.WithKind(k.name))
	return obj
}

// partialMetadata reads what it can of an object's metadata; nil when even that does not decode.
func partialMetadata(data []byte) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	if err := json.Unmarshal(data, m); err != nil || m.Name == "" {
		return nil
	}
	return m
}

// itemwiseWatch is a watch whose events are decoded one by one. An object that does not decode is
// reported and passed on as deleted, carrying only its metadata: an object that stopped decoding
// leaves the cache, as the next list would leave it out, instead of staying there as it was.
type itemwiseWatch struct {
	kind   ownResource
	skip   skipFunc
	body   io.ReadCloser
	result chan watch.Event
	done   chan struct{}
	once   sync.Once
}

func (w *itemwiseWatch) ResultChan() <-chan watch.Event { return w.result }

func (w *itemwiseWatch) Stop() {
	w.once.Do(func() {
		close(w.done)
		_ = w.body.Close()
	})
}

func (w *itemwiseWatch) run() {
	defer close(w.result)
	defer func() { _ = w.body.Close() }()
	stream := json.NewDecoder(w.body)
	for {
		var e struct {
			Type   watch.EventType `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		// The stream ends at the server's timeout, at Stop, or broken; the reflector watches again
		// from the last resourceVersion it saw either way.
		if err := stream.Decode(&e); err != nil {
			return
		}
		event, ok := w.event(e.Type, e.Object)
		if !ok {
			continue
		}
		select {
		case w.result <- event:
		case <-w.done:
			return
		}
	}
}

func (w *itemwiseWatch) event(typ watch.EventType, object []byte) (watch.Event, bool) {
	switch typ {
	case watch.Error:
		status := &metav1.Status{}
		if err := json.Unmarshal(object, status); err != nil {
			status = &metav1.Status{Status: metav1.StatusFailure, Message: fmt.Sprintf("watch error that does not decode: %v", err)}
		}
		return watch.Event{Type: watch.Error, Object: status}, true
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
		obj, err := w.kind.decode(object)
		if err == nil {
			return watch.Event{Type: typ, Object: obj}, true
		}
		m := partialMetadata(object)
		w.skip(w.kind.name, m, err)
		if m == nil || typ == watch.Bookmark {
			return watch.Event{}, false
		}
		return watch.Event{Type: watch.Deleted, Object: w.kind.stub(m)}, true
	}
	return watch.Event{}, false
}

// undecodableReporter logs an object that does not decode and puts a Warning Event on it, once per
// version of it: relists and rewatches meet it again and again.
type undecodableReporter struct {
	recorder record.EventRecorder
	mu       sync.Mutex
	reported map[string]string // resourceVersion by kind/namespace/name
}

// maxMessage keeps an Event's message within what the API server stores.
const maxMessage = 1000

func (r *undecodableReporter) report(kind string, m *metav1.PartialObjectMetadata, err error) {
	if m == nil {
		klog.ErrorS(err, "an object that does not decode, not even its name, is left out", "kind", kind)
		return
	}
	key := kind + "/" + m.Namespace + "/" + m.Name
	r.mu.Lock()
	if r.reported == nil {
		r.reported = map[string]string{}
	}
	seen := r.reported[key] == m.ResourceVersion
	r.reported[key] = m.ResourceVersion
	r.mu.Unlock()
	if seen {
		return
	}
	klog.ErrorS(err, "an object that does not decode is left out of the operator's cache until it is fixed",
		"kind", kind, "object", klog.KRef(m.Namespace, m.Name), "resourceVersion", m.ResourceVersion)
	if r.recorder == nil {
		return
	}
	msg := fmt.Sprintf("the operator cannot read this %s and leaves it alone until it is fixed (other objects are not affected): %v", kind, err)
	if len(msg) > maxMessage {
		msg = msg[:maxMessage]
	}
	stub := resourceNamed(kind).stub(m)
	r.recorder.Event(stub, "Warning", "Undecodable", msg)
}

// resourceNamed is the resource of a kind the machine runs; the FlinkApplication's for any other
// name (a FlinkSnapshot too), as the kinds' registry answered when the reporter asked it.
func resourceNamed(kind string) ownResource {
	switch kind {
	case v1beta1.FlinkSessionJobKind:
		return sessionJobResource
	case v1beta1.FlinkSessionClusterKind:
		return sessionClusterResource
	}
	return applicationResource
}
