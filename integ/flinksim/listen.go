package flinksim

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// ListenAndServe serves the Fleet on addr until ctx ends and returns the
// address actually bound. A missing host binds loopback, so ":0" picks a free
// port on 127.0.0.1.
func ListenAndServe(ctx context.Context, addr string, f *Fleet) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if host == "" {
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			f.logf("flinksim: serving %s: %v", ln.Addr(), err)
		}
	}()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return ln.Addr().String(), nil
}
