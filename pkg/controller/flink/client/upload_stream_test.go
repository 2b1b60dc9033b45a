package client

import (
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/internal/heapwatch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// zeros is a reader of n bytes that holds none of them.
type zeros struct{ left int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.left <= 0 {
		return 0, io.EOF
	}
	n := int64(len(p))
	if n > z.left {
		n = z.left
	}
	clear(p[:n])
	z.left -= n
	return int(n), nil
}

// A jar is uploaded as it is read: a 96 MiB upload grows the heap by a small fraction of it
// (issue 25 item 2: the multipart body was built in a buffer and copied again, 3 to 4.5 times
// the jar in memory).
func TestAJarUploadStreams(t *testing.T) {
	const size = 96 << 20
	var received atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mr := multipart.NewReader(r.Body, params["boundary"])
		part, err := mr.NextPart()
		if err != nil || part.FormName() != "jarfile" || part.FileName() != "fat.jar" {
			http.Error(w, "no jarfile part", http.StatusBadRequest)
			return
		}
		n, _ := io.Copy(io.Discard, part)
		received.Store(n)
		_, _ = io.WriteString(w, `{"filename":"/tmp/flink-web-upload/0123_fat.jar","status":"success"}`)
	}))
	t.Cleanup(srv.Close)
	c := New(Config{SubmitTimeout: time.Minute}, nil)

	h := heapwatch.Start()
	id, err := c.UploadJar(context.Background(), srv.URL, "fat.jar", &zeros{left: size})
	growth := h.Growth()
	require.NoError(t, err)
	assert.Equal(t, "0123_fat.jar", id)
	assert.Equal(t, int64(size), received.Load(), "the whole jar arrived")
	assert.Less(t, growth, uint64(size/4), "heap grew by %d MiB while uploading a %d MiB jar", growth>>20, size>>20)
}
