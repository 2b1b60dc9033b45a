package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A poll's answer buffer is reused for the next answer once decoded: what the first answer
// decoded to must not change when the next answer is read into the same buffer, whether the
// JobManager sends a length or chunks.
func TestADecodedAnswerOutlivesItsBuffer(t *testing.T) {
	for _, chunked := range []bool{false, true} {
		name := map[bool]string{false: "with a length", true: "chunked"}[chunked]
		t.Run(name, func(t *testing.T) {
			var n int
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				n++
				body := `{"jid":"` + testJobID + `","name":"` + strings.Repeat(string(rune('a'+n)), 40) + `","state":"RUNNING",` +
					`"vertices":[{"id":"v` + strings.Repeat("x", n) + `","name":"src","parallelism":2,"status":"RUNNING"}]}`
				if chunked {
					w.(http.Flusher).Flush() // headers out before the body: no Content-Length
				}
				_, _ = w.Write([]byte(body))
			}))
			t.Cleanup(srv.Close)
			c := newTestClient(DefaultConfig())
			first, err := c.GetJob(context.Background(), srv.URL, testJobID)
			require.NoError(t, err)
			for range 20 {
				_, err := c.GetJob(context.Background(), srv.URL, testJobID)
				require.NoError(t, err)
			}
			assert.Equal(t, strings.Repeat("b", 40), first.Name)
			assert.Equal(t, "vx", first.Vertices[0].ID)
			assert.Equal(t, testJobID, first.JID)
		})
	}
}
