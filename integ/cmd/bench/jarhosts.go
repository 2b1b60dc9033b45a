package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Paths of the hostile jar hosts, one per hostile session job of the soak.
const (
	jarLarge    = "/large.jar"         // a jar of jarHosts.largeBytes, streamed
	jarRedirect = "/redirect-loop.jar" // redirects to itself, forever
	jarStall    = "/stall.jar"         // accepts the request and never answers it
	jarDrip     = "/drip.jar"          // answers 200 with a large Content-Length, then 2 bytes a second
)

// dripJarBytes is the Content-Length the slow-drip host announces: a jar the operator would take,
// of which it gets a few bytes a second for as long as it waits.
const dripJarBytes = 64 << 20

// jarHosts serves the hostile tenants' jars on 127.0.0.1, the one private address the local
// environment's operator may fetch jars from (integ/localenv's jars.allowedNetworks), as the e2e
// suite's jar server does. Nothing it sends is held in memory: the large jar is generated as it
// is written.
type jarHosts struct {
	url        string
	largeBytes int64
	srv        *http.Server

	mu       sync.Mutex
	requests map[string]int
}

// startJarHosts serves until stop; largeBytes is the size of the large jar.
func startJarHosts(largeBytes int64) (*jarHosts, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &jarHosts{url: "http://" + ln.Addr().String(), largeBytes: largeBytes, requests: map[string]int{}}
	h.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := h.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Printf("jar hosts: %v\n", err)
		}
	}()
	return h, nil
}

// stop closes every connection, the stalled and dripping ones included.
func (h *jarHosts) stop() { _ = h.srv.Close() }

// uri is the jarURI of one of the hosts.
func (h *jarHosts) uri(path string) string { return h.url + path }

func (h *jarHosts) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.requests[r.URL.Path]++
	h.mu.Unlock()
	switch r.URL.Path {
	case jarLarge:
		w.Header().Set("Content-Type", "application/java-archive")
		w.Header().Set("Content-Length", strconv.FormatInt(h.largeBytes, 10))
		_, _ = io.Copy(w, io.LimitReader(io.MultiReader(strings.NewReader(zipSignature), zeros{}), h.largeBytes))
	case jarRedirect:
		// Each hop adds to the query, so that no client can tell a loop by the URL alone.
		hop, _ := strconv.Atoi(r.URL.Query().Get("hop"))
		http.Redirect(w, r, fmt.Sprintf("%s?hop=%d", jarRedirect, hop+1), http.StatusFound)
	case jarStall:
		// The request was read and the connection stays open; no status line ever comes.
		<-r.Context().Done()
	case jarDrip:
		w.Header().Set("Content-Type", "application/java-archive")
		w.Header().Set("Content-Length", strconv.Itoa(dripJarBytes))
		w.WriteHeader(http.StatusOK)
		dripBody(r.Context(), w, 2)
	default:
		http.NotFound(w, r)
	}
}

// dripBody writes jar bytes at rate bytes a second until the client goes.
func dripBody(ctx context.Context, w http.ResponseWriter, rate int) {
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	piece := make([]byte, rate)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, err := w.Write(piece); err != nil || rc.Flush() != nil {
			return
		}
	}
}

// requests is how many requests the host of path has served.
func (h *jarHosts) requestsTo(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.requests[path]
}

// zipSignature begins the large jar as a zip's local file header does; zeros follow. Nobody
// unpacks it (the simulator takes any upload), but it starts like a jar.
const zipSignature = "PK\x03\x04"

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
