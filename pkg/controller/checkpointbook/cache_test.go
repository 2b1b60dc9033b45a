package checkpointbook

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Every name PageName gives is a page's; no other name is.
func TestPageNamesAreThoseOfPages(t *testing.T) {
	for i := 0; i < 1000; i++ {
		assert.True(t, IsPageName(PageName(Key{Namespace: "ns", Kind: "FlinkApplication", Name: fmt.Sprintf("app-%d", i)})))
	}
	for _, name := range []string{"flinkfsm-checkpoints-4", "flinkfsm-checkpoints-", "flinkfsm-checkpoints-01", "tenant"} {
		assert.False(t, IsPageName(name), name)
	}
}

// The cache keeps of a page the entries Read reads, whatever else is written into it, and of a
// ConfigMap with the book's label that is no page, its name alone.
func TestTheCacheKeepsOfAPageItsEntries(t *testing.T) {
	k := Key{Namespace: "ns", Kind: "FlinkApplication", Name: "wc"}
	e := Entry{JobID: "0123", Path: "s3://b/" + strings.Repeat("&", maxPath-7), At: time.Unix(100, 0).UTC()}
	raw, err := json.Marshal(e)
	require.NoError(t, err)
	page := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: PageName(k), Namespace: "ns", Labels: map[string]string{Label: "true", "x": "y"},
		Annotations: map[string]string{"a": "b"}},
		Data: map[string]string{k.field(): string(raw), "junk": "1", "FlinkApplication.big": strings.Repeat("x", maxEntryBytes+1), "1.x": "z"}}
	kept := ForCache(page)
	got, ok := Read(kept, k)
	require.True(t, ok, "the longest entry the book writes is kept")
	assert.Equal(t, e, got)
	assert.Equal(t, map[string]string{k.field(): string(raw)}, kept.Data)
	assert.Empty(t, kept.Labels)
	assert.Empty(t, kept.Annotations)

	other := page.DeepCopy()
	other.Name = "tenant-notes"
	assert.Empty(t, ForCache(other).Data)
	assert.Equal(t, "tenant-notes", ForCache(other).Name)
}
