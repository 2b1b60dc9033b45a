package operator

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/client-go/rest"
)

type fakeController struct{ healthy, stalled error }

func (f *fakeController) Healthy() error { return f.healthy }
func (f *fakeController) Stalled() error { return f.stalled }

func get(h http.HandlerFunc) (int, string) {
	rec := httptest.NewRecorder()
	h(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	return rec.Code, rec.Body.String()
}

// /healthz says the process works; /readyz that it acts with synced caches and moving workers, or
// stands by. A standby is both.
func TestProbesAnswerTheReplicasState(t *testing.T) {
	ctrl := &fakeController{}
	st := &state{ctrl: ctrl}
	live, ready := probe(st.live), probe(st.ready)

	code, body := get(ready)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok (standby)", body)
	code, _ = get(live)
	assert.Equal(t, http.StatusOK, code)

	st.acting.Store(true)
	ctrl.healthy = errors.New("informers not synced: FlinkApplication in all namespaces")
	code, body = get(ready)
	assert.Equal(t, http.StatusInternalServerError, code)
	assert.Equal(t, "unhealthy: informers not synced: FlinkApplication in all namespaces\n", body)
	code, _ = get(live)
	assert.Equal(t, http.StatusOK, code, "starting is no reason to restart")

	ctrl.healthy, ctrl.stalled = nil, errors.New("3 objects wait in the workqueue and no worker has moved for 6m0s")
	code, body = get(live)
	assert.Equal(t, http.StatusInternalServerError, code)
	assert.Contains(t, body, "no worker has moved")
	ctrl.stalled = nil
	code, body = get(ready)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok (leading)", body)
}

// Kubernetes' own kinds go as protobuf, and the config the custom-resource clients use is left as
// it was: the API server answers protobuf for custom resources with 406.
func TestKubernetesKindsSpeakProtobufAndOurOwnJSON(t *testing.T) {
	base := &rest.Config{Host: "https://example"}
	kube := protobufFor(base)
	assert.Equal(t, "application/vnd.kubernetes.protobuf", kube.ContentType)
	assert.Contains(t, kube.AcceptContentTypes, "application/json", "a kind without protobuf still decodes")
	assert.Empty(t, base.ContentType)
	assert.Empty(t, base.AcceptContentTypes)
}
