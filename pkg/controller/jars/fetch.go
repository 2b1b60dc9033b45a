// Package jars fetches the jars of session jobs for upload to a Flink session cluster. A jarURI is
// user input that makes the operator open a connection from inside the cluster, so every fetch is
// checked against the operator's policy at the moment it connects: the scheme, the host, and the
// address the host resolved to (only global unicast addresses pass, see addresses.go, unless the
// operator's config admits a range; judging the address dialed also defeats DNS names that resolve
// inside the cluster, and redirects).
package jars

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/flinkfsm/flinkfsm/pkg/printable"
)

// Policy is what the operator lets a jarURI reach.
type Policy struct {
	// AllowHTTP admits http:// as well as https://.
	AllowHTTP bool
	// AllowedHosts, when not empty, are the only hosts a jar may come from (exact names, or
	// ".example.com" for a domain and its subdomains).
	AllowedHosts []string
	// AllowedNetworks are address ranges admitted although they are not global unicast (loopback,
	// private, link-local, carrier-grade NAT, ...; e.g. "127.0.0.1/32" for a test server on the
	// operator's own machine). A range matches the address dialed, and for an IPv4-mapped or NAT64
	// (64:ff9b::/96) address also the IPv4 address it is translated to.
	AllowedNetworks []string
	// MaxBytes bounds a jar's size.
	MaxBytes int64
	// Timeout bounds one fetch, connection and body included.
	Timeout time.Duration
	// Dir is where fetched jars are written until they are uploaded (the operator's emptyDir);
	// the system's temporary directory when empty.
	Dir string
	// Concurrency bounds the fetches in flight at once; a fetch beyond it is refused as busy, so
	// that no worker waits for a slot.
	Concurrency int
}

// DefaultPolicy is https only, to global unicast addresses, 256 MiB and two minutes at most, four
// fetches at a time.
func DefaultPolicy() Policy {
	return Policy{MaxBytes: 256 << 20, Timeout: 2 * time.Minute, Concurrency: 4}
}

// Jar is a fetched jar, or the name of one already in the cluster's upload directory (local://).
// A fetched jar is a file, never held in memory: fat jars of 100-200 MiB are common, and several
// fetched at once would pass the operator's memory limit. Remove it once it is uploaded.
type Jar struct {
	// Name is the jar's file name, as it is uploaded.
	Name string
	// Path is the file the jar was written to; "" for a local jar.
	Path string
	// Size is the jar's size in bytes.
	Size int64
	// Local is set for local://, which names a jar already in the cluster's upload directory.
	Local bool
}

// Open reads the fetched jar.
func (j *Jar) Open() (io.ReadCloser, error) { return os.Open(j.Path) }

// Remove deletes the fetched jar's file.
func (j *Jar) Remove() {
	if j.Path != "" {
		_ = os.Remove(j.Path)
	}
}

// Error is a fetch that failed; Retryable says whether the same fetch may succeed later.
type Error struct {
	URI       string
	Reason    string
	Retryable bool
}

// Error quotes the jarURI, and escapes what the reason quotes of it: it is the tenant's text, and
// errors reach status, Events and logs.
func (e *Error) Error() string { return fmt.Sprintf("jarURI %q: %s", e.URI, printable.Text(e.Reason)) }

// IsRetryable tells whether err is a fetch that may succeed later (a network error, a 5xx).
func IsRetryable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Retryable
}

// ErrBusy is a fetch refused because Policy.Concurrency fetches are in flight: try again shortly.
var ErrBusy = errors.New("the operator is fetching as many jars as it allows at once")

// Fetcher fetches jars under a policy.
type Fetcher struct {
	policy   Policy
	networks []netip.Prefix
	client   *http.Client
	slots    chan struct{}
}

// NewFetcher checks the policy and builds a fetcher that applies it to every connection it makes.
func NewFetcher(p Policy) (*Fetcher, error) {
	d := DefaultPolicy()
	if p.MaxBytes <= 0 {
		p.MaxBytes = d.MaxBytes
	}
	if p.Timeout <= 0 {
		p.Timeout = d.Timeout
	}
	if p.Concurrency <= 0 {
		p.Concurrency = d.Concurrency
	}
	f := &Fetcher{policy: p, slots: make(chan struct{}, p.Concurrency)}
	for _, n := range p.AllowedNetworks {
		prefix, err := netip.ParsePrefix(strings.TrimSpace(n))
		if err != nil {
			return nil, fmt.Errorf("jar policy: allowed network %q: %w", n, err)
		}
		f.networks = append(f.networks, prefix)
	}
	dialer := &net.Dialer{Timeout: 30 * time.Second, Control: f.checkAddress}
	transport := &http.Transport{
		// No proxy from the environment: the policy judges the address actually connected to.
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   30 * time.Second,
		ResponseHeaderTimeout: p.Timeout,
		MaxIdleConns:          4,
		IdleConnTimeout:       30 * time.Second,
	}
	f.client = &http.Client{
		Transport: transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("too many redirects")
			}
			return f.checkURL(req.URL)
		},
	}
	return f, nil
}

// Fetch returns the jar a jarURI names, written to a file in Policy.Dir through a fixed buffer. A
// sha256 (hex) given is checked against the content as it streams. ErrBusy when Policy.Concurrency
// fetches are in flight.
func (f *Fetcher) Fetch(ctx context.Context, uri, sha256Hex string) (*Jar, error) {
	if i := strings.IndexFunc(uri, printable.Escaped); i >= 0 {
		// The CRD refuses them at apply; an object stored before that rule meets it here.
		r, _ := utf8.DecodeRuneInString(uri[i:])
		return nil, &Error{URI: uri, Reason: fmt.Sprintf("it holds %U at byte %d, and a jarURI may hold no control or format character", r, i)}
	}
	u, err := url.Parse(uri)
	if err != nil {
		return nil, &Error{URI: uri, Reason: "not a URL: " + err.Error()}
	}
	if u.Scheme == "local" {
		name := strings.TrimPrefix(u.Host+u.Path, "/")
		if name == "" || strings.Contains(name, "/") {
			return nil, &Error{URI: uri, Reason: "local:// names a jar file in the cluster's upload directory, as local://<file>.jar"}
		}
		return &Jar{Name: name, Local: true}, nil
	}
	if err := f.checkURL(u); err != nil {
		return nil, &Error{URI: uri, Reason: err.Error()}
	}
	select {
	case f.slots <- struct{}{}:
		defer func() { <-f.slots }()
	default:
		return nil, ErrBusy
	}
	ctx, cancel := context.WithTimeout(ctx, f.policy.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &Error{URI: uri, Reason: err.Error()}
	}
	resp, err := f.client.Do(req)
	if err != nil {
		var refused *refusedAddress
		if errors.As(err, &refused) {
			return nil, &Error{URI: uri, Reason: refused.Error()}
		}
		return nil, &Error{URI: uri, Reason: err.Error(), Retryable: true}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &Error{URI: uri, Reason: fmt.Sprintf("HTTP %d", resp.StatusCode), Retryable: resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests}
	}
	name := u.Path[strings.LastIndex(u.Path, "/")+1:]
	if !strings.HasSuffix(name, ".jar") {
		name += ".jar"
	}
	jar := &Jar{Name: name}
	if err := f.save(jar, resp.Body, sha256Hex); err != nil {
		jar.Remove()
		err.URI = uri
		return nil, err
	}
	return jar, nil
}

// jarFilePattern names the files a fetcher writes jars to.
const jarFilePattern = "flinkfsm-jar-*.jar"

// RemoveLeftovers deletes the jar files an earlier process of the operator left in Policy.Dir, and
// says how many: one stopped mid-fetch or mid-upload leaves its file, and an emptyDir outlives a
// container restart, so a crash loop would fill it. Call it at start, before any fetch. Only a
// configured Dir is cleaned: the system's temporary directory may be shared with others.
func (f *Fetcher) RemoveLeftovers() (int, error) {
	if f.policy.Dir == "" {
		return 0, nil
	}
	files, err := filepath.Glob(filepath.Join(f.policy.Dir, jarFilePattern))
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, name := range files {
		if err := os.Remove(name); err != nil && !os.IsNotExist(err) {
			return removed, err
		}
		removed++
	}
	return removed, nil
}

// save streams a jar's body into a new file of Policy.Dir, bounded by MaxBytes, and checks its
// SHA-256 on the way.
func (f *Fetcher) save(jar *Jar, body io.Reader, sha256Hex string) *Error {
	file, err := os.CreateTemp(f.policy.Dir, jarFilePattern)
	if err != nil {
		return &Error{Reason: "no room for the jar: " + err.Error(), Retryable: true}
	}
	jar.Path = file.Name()
	hash := sha256.New()
	n, err := io.Copy(io.MultiWriter(file, hash), io.LimitReader(body, f.policy.MaxBytes+1))
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	jar.Size = n
	switch {
	case err != nil:
		return &Error{Reason: "reading the jar: " + err.Error(), Retryable: true}
	case n > f.policy.MaxBytes:
		return &Error{Reason: fmt.Sprintf("the jar is larger than the operator's limit of %d bytes", f.policy.MaxBytes)}
	}
	if got := hex.EncodeToString(hash.Sum(nil)); sha256Hex != "" && !strings.EqualFold(got, sha256Hex) {
		return &Error{Reason: fmt.Sprintf("SHA-256 %s does not match jarSHA256 %s", got, sha256Hex)}
	}
	return nil
}

// checkURL applies the policy's scheme and host rules.
func (f *Fetcher) checkURL(u *url.URL) error {
	switch u.Scheme {
	case "https":
	case "http":
		if !f.policy.AllowHTTP {
			return errors.New("http:// is not allowed by the operator's jar policy; use https://")
		}
	default:
		return fmt.Errorf("scheme %q is not allowed; use https://, or local:// for a jar already in the cluster", u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return errors.New("the URL names no host")
	}
	if len(f.policy.AllowedHosts) > 0 && !slices.ContainsFunc(f.policy.AllowedHosts, func(h string) bool { return hostMatches(host, h) }) {
		return fmt.Errorf("host %q is not in the operator's allowed jar hosts", host)
	}
	return nil
}

func hostMatches(host, allowed string) bool {
	host, allowed = strings.ToLower(host), strings.ToLower(strings.TrimSpace(allowed))
	if strings.HasPrefix(allowed, ".") {
		return host == allowed[1:] || strings.HasSuffix(host, allowed)
	}
	return host == allowed
}

// checkAddress runs for every connection, after name resolution and on every redirect hop: the
// address connected to is the one judged, whatever name or redirect led there.
func (f *Fetcher) checkAddress(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return err
	}
	for _, dest := range destinations(ap.Addr()) {
		for _, n := range f.networks {
			if n.Contains(dest) {
				return nil
			}
		}
	}
	if refused := judge(ap.Addr()); refused != nil {
		return refused
	}
	return nil
}
