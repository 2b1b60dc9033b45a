// Package checkpointbook keeps the newest recorded checkpoint of many jobs in a few ConfigMaps per
// namespace, its pages, written in batches.
//
// A checkpointing job's newest checkpoint must be written down somewhere that outlives the operator
// and the JobManager, so that a job lost without Flink HA restarts from it. Written into each
// object's status once a minute, that is one write of a large custom resource per checkpointing
// job and minute: at 5,000 such jobs, 80 writes a second, nearly all of the API server's work. The
// book writes each page of a namespace at most once per flush, with every entry noted since: a
// few small ConfigMap patches a second for the whole fleet. The object's status keeps the ledger;
// the book only carries the newest checkpoint between the ledger's own records of it.
//
// The package takes values: it knows pages, entries and a Kubernetes client, not the objects
// whose jobs it records.
package checkpointbook

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
)

const (
	// Label marks the book's pages; the operator watches ConfigMaps that carry it.
	Label = "flink.k8s.io/checkpoint-book"
	// pages is how many ConfigMaps a namespace's book may take. An entry is about 250 bytes, so
	// four pages of at most 1 MiB each hold some 16,000 jobs of one namespace; a page past its size
	// fails its writes, and its jobs' checkpoints are recorded in status instead.
	pages = 4
	// maxPath bounds an entry: a longer checkpoint path is recorded in status, not in a page many
	// jobs share.
	maxPath = 1024
	// writeTimeout bounds one page's write, so that a namespace whose writes hang holds up the
	// others' for at most that long.
	writeTimeout = 10 * time.Second
)

// Entry is a job's newest checkpoint as the book records it.
type Entry struct {
	JobID string `json:"jobID"`
	Path  string `json:"path"`
	// At is when Flink triggered the checkpoint.
	At time.Time `json:"at"`
}

// Key names a job's entry: its owner's kind and name, in the owner's namespace.
type Key struct {
	Namespace, Kind, Name string
}

// field is the entry's key in its page's data: kind and name, which a namespace holds once.
func (k Key) field() string { return k.Kind + "." + k.Name }

// Usable tells whether the job's entries fit the book: a ConfigMap key is at most 253 characters.
func (k Key) Usable() bool { return len(validation.IsConfigMapKey(k.field())) == 0 }

// PageName is the name of the ConfigMap of the key's namespace that holds its entry.
func PageName(k Key) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(k.field()))
	return fmt.Sprintf("flinkfsm-checkpoints-%d", h.Sum32()%pages)
}

// Read is the key's entry in a page (nil when there is none), and false when none can be read.
func Read(page *corev1.ConfigMap, k Key) (Entry, bool) {
	if page == nil {
		return Entry{}, false
	}
	raw, ok := page.Data[k.field()]
	if !ok {
		return Entry{}, false
	}
	var e Entry
	if err := json.Unmarshal([]byte(raw), &e); err != nil || e.JobID == "" || e.Path == "" {
		return Entry{}, false
	}
	return e, true
}

// noted is an entry this process noted, when, and whether its page has it.
type noted struct {
	entry   Entry
	at      time.Time
	written bool
}

type pageKey struct{ namespace, name string }

// Book notes entries and writes them to their pages at each Flush.
type Book struct {
	kube kubernetes.Interface
	// acting is asked before each write; an error (the leader lease is not surely held) leaves
	// the entries to the next flush, so that a replica past its lease never overwrites what the
	// new leader noted.
	acting func() error

	mu    sync.Mutex
	notes map[Key]*noted
	// dirty are the fields of each page to write: an entry, or nil to remove it.
	dirty map[pageKey]map[string]*Entry
}

// New is a book writing with kube; acting may be nil.
func New(kube kubernetes.Interface, acting func() error) *Book {
	return &Book{kube: kube, acting: acting, notes: map[Key]*noted{}, dirty: map[pageKey]map[string]*Entry{}}
}

// Note takes a job's newest checkpoint, noted now, for the next flush. It is false when the entry
// does not fit the book, which the caller records elsewhere.
func (b *Book) Note(k Key, e Entry, now time.Time) bool {
	if !k.Usable() || len(e.Path) > maxPath || e.JobID == "" || e.Path == "" {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.notes[k] = &noted{entry: e, at: now}
	b.mark(k, &e)
	return true
}

// Forget removes a job's entry at the next flush, its owner being gone: one this process noted, or
// one the page read from the cluster holds.
func (b *Book) Forget(k Key, page *corev1.ConfigMap) {
	b.mu.Lock()
	defer b.mu.Unlock()
	inPage := false
	if page != nil {
		_, inPage = page.Data[k.field()]
	}
	if _, ok := b.notes[k]; !ok && !inPage {
		return
	}
	delete(b.notes, k)
	b.mark(k, nil)
}

func (b *Book) mark(k Key, e *Entry) {
	p := pageKey{k.Namespace, PageName(k)}
	if b.dirty[p] == nil {
		b.dirty[p] = map[string]*Entry{}
	}
	b.dirty[p][k.field()] = e
}

// Noted tells whether this process has noted an entry of the job (and not forgotten it).
func (b *Book) Noted(k Key) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.notes[k]
	return ok
}

// Unwritten tells whether the job's last noted entry has not reached its page yet.
func (b *Book) Unwritten(k Key) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, ok := b.notes[k]
	return ok && !n.written
}

// Overdue is the job's last noted entry when its page has not taken it although it was noted
// more than after before now: its page is failing, and the caller records the entry elsewhere.
func (b *Book) Overdue(k Key, now time.Time, after time.Duration) (Entry, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, ok := b.notes[k]
	if !ok || n.written || now.Sub(n.at) < after {
		return Entry{}, false
	}
	return n.entry, true
}

// Newest is the job's newest entry: what this process noted, or what the page read from the
// cluster holds, whichever is newer.
func (b *Book) Newest(k Key, page *corev1.ConfigMap) (Entry, bool) {
	e, ok := Read(page, k)
	b.mu.Lock()
	defer b.mu.Unlock()
	if n, have := b.notes[k]; have && (!ok || n.entry.JobID != e.JobID || !n.entry.At.Before(e.At)) {
		return n.entry, true
	}
	return e, ok
}

// Flush writes every page with entries noted since the last flush, one patch a page, and says
// how many pages it wrote. A page that fails keeps its entries for the next flush; the error names
// it, and the other pages are written all the same.
func (b *Book) Flush(ctx context.Context) (int, error) {
	if b.acting != nil {
		if err := b.acting(); err != nil {
			return 0, err
		}
	}
	b.mu.Lock()
	work := b.dirty
	b.dirty = map[pageKey]map[string]*Entry{}
	b.mu.Unlock()
	keys := make([]pageKey, 0, len(work))
	for p := range work {
		keys = append(keys, p)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].namespace < keys[j].namespace || keys[i].namespace == keys[j].namespace && keys[i].name < keys[j].name
	})
	var errs []error
	written := 0
	for _, p := range keys {
		fields := work[p]
		if err := b.write(ctx, p, fields); err != nil {
			errs = append(errs, fmt.Errorf("checkpoint book %s/%s: %w", p.namespace, p.name, err))
			b.requeue(p, fields)
			continue
		}
		written++
		b.markWritten(p, fields)
	}
	if len(errs) > 0 {
		return written, fmt.Errorf("%d of %d pages not written; first: %w", len(errs), len(keys), errs[0])
	}
	return written, nil
}

// write patches the page with the fields, creating it when it is missing. A JSON merge patch
// touches only these fields, so operators that own other jobs of the namespace (shards) write
// the same page without reading it first.
func (b *Book) write(ctx context.Context, p pageKey, fields map[string]*Entry) error {
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	data := map[string]interface{}{}
	kept := map[string]string{}
	for f, e := range fields {
		if e == nil {
			data[f] = nil
			continue
		}
		raw, err := json.Marshal(e)
		if err != nil {
			return err
		}
		data[f] = string(raw)
		kept[f] = string(raw)
	}
	patch, err := json.Marshal(map[string]interface{}{
		"metadata": map[string]interface{}{"labels": map[string]string{Label: "true"}},
		"data":     data,
	})
	if err != nil {
		return err
	}
	cms := b.kube.CoreV1().ConfigMaps(p.namespace)
	got, err := cms.Patch(ctx, p.name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err == nil && len(got.Data) == 0 {
		// The last job of the page is gone: so goes the page, unless a write came in between.
		rv := got.ResourceVersion
		err = cms.Delete(ctx, p.name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			err = nil
		}
		return err
	}
	if !apierrors.IsNotFound(err) {
		return err
	}
	if len(kept) == 0 {
		return nil
	}
	page := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: p.namespace, Labels: map[string]string{Label: "true"}},
		Data: kept}
	_, err = cms.Create(ctx, page, metav1.CreateOptions{})
	return err
}

// requeue puts a failed page's fields back, under any noted since.
func (b *Book) requeue(p pageKey, fields map[string]*Entry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dirty[p] == nil {
		b.dirty[p] = map[string]*Entry{}
	}
	for f, e := range fields {
		if _, newer := b.dirty[p][f]; !newer {
			b.dirty[p][f] = e
		}
	}
}

// markWritten notes that the page holds the fields' entries, unless a newer one was noted since.
func (b *Book) markWritten(p pageKey, fields map[string]*Entry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, n := range b.notes {
		if k.Namespace != p.namespace || PageName(k) != p.name {
			continue
		}
		if e, ok := fields[k.field()]; ok && e != nil && *e == n.entry {
			n.written = true
		}
	}
}

// Run flushes every interval until ctx ends, reporting each flush to done (which may be nil).
func (b *Book) Run(ctx context.Context, every time.Duration, done func(pages int, err error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			n, err := b.Flush(ctx)
			if done != nil {
				done(n, err)
			}
		}
	}
}
