package operator

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHealthzAnswersTheControllersHealth(t *testing.T) {
	var health error
	h := healthz(func() error { return health })

	rec := httptest.NewRecorder()
	h(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "ok", rec.Body.String())

	health = errors.New("informers not synced: FlinkApplication in all namespaces")
	rec = httptest.NewRecorder()
	h(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.Equal(t, "unhealthy: informers not synced: FlinkApplication in all namespaces\n", rec.Body.String())
}
