package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A JobManager runs the user's image: a redirect it answers is reported, never followed.
func TestARedirectIsNotFollowed(t *testing.T) {
	var reached atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		_, _ = w.Write([]byte(`{"jid":"x","state":"RUNNING"}`))
	}))
	defer elsewhere.Close()
	jm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/api/v1/secrets", http.StatusFound)
	}))
	defer jm.Close()

	c := New(DefaultConfig(), nil)
	_, err := c.GetJob(context.Background(), jm.URL, "0123")
	require.Error(t, err)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusFound, e.StatusCode)
	assert.Zero(t, reached.Load(), "the redirect's target was never contacted")
}

// What a JobManager says reaches status as one bounded, printable line.
func TestExcerptMakesUntrustedTextFitForStatus(t *testing.T) {
	assert.Equal(t, "line one line two", Excerpt("line one\nline\ttwo\r\n"))
	assert.Equal(t, "bellescape[31m", Excerpt("bell\aescape\x1b[31m"))
	long := Excerpt(strings.Repeat("x", 10000))
	assert.LessOrEqual(t, len(long), maxExcerpt+3)
	jm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"errors":["bad\u0007 request\nwith\u001b[2J lines ` + strings.Repeat("y", 5000) + `"]}`))
	}))
	defer jm.Close()
	_, err := New(DefaultConfig(), nil).GetJob(context.Background(), jm.URL, "0123")
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.NotContains(t, e.Message, "\a")
	assert.NotContains(t, e.Message, "\x1b")
	assert.NotContains(t, e.Message, "\n")
	assert.LessOrEqual(t, len(e.Message), maxExcerpt+3)
}

type recordingTransport struct {
	calls atomic.Int32
	next  http.RoundTripper
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.calls.Add(1)
	req.Header.Set("Authorization", "Bearer operator-token")
	return r.next.RoundTrip(req)
}

// Through the API server's service proxy every request carries the operator's credentials: the
// client sends them through the transport it is given.
func TestAGivenTransportCarriesEveryRequest(t *testing.T) {
	var auth atomic.Value
	jm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		_, _ = w.Write([]byte(`{"jid":"0123","state":"RUNNING"}`))
	}))
	defer jm.Close()
	rt := &recordingTransport{next: http.DefaultTransport}
	cfg := DefaultConfig()
	cfg.Transport = rt
	_, err := New(cfg, nil).GetJob(context.Background(), jm.URL, "0123")
	require.NoError(t, err)
	assert.Equal(t, int32(1), rt.calls.Load())
	assert.Equal(t, "Bearer operator-token", auth.Load())
}
