//go:build linux

package localcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"time"
)

// probe is one readiness check; nil means ready.
type probe func(ctx context.Context, ports []int) error

// httpProbe expects 200 from url(ports). rootCAs nil means the component serves a certificate it
// made up in memory, which there is nothing to verify against.
func httpProbe(rootCAs *x509.CertPool, token string, url func(ports []int) string) probe {
	tlsConfig := &tls.Config{RootCAs: rootCAs, InsecureSkipVerify: rootCAs == nil} //nolint:gosec // see above
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true},
	}
	return func(ctx context.Context, ports []int) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url(ports), nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s: %s", req.URL, resp.Status, body)
		}
		return nil
	}
}
