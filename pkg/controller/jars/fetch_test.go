package jars

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/internal/heapwatch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var jarBytes = []byte("PK\x03\x04 a jar, as far as this test cares")

func jarServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/wordcount.jar":
			_, _ = w.Write(jarBytes)
		case "/big.jar":
			_, _ = w.Write(bytes.Repeat([]byte("x"), 2048))
		case "/broken.jar":
			w.WriteHeader(http.StatusBadGateway)
		case "/elsewhere.jar":
			port := r.Host[strings.LastIndex(r.Host, ":"):]
			http.Redirect(w, r, "http://localhost"+port+"/wordcount.jar", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func fetcher(t *testing.T, p Policy) *Fetcher {
	f, err := NewFetcher(p)
	require.NoError(t, err)
	return f
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// A test server on the operator's own machine stands for an address inside the cluster: the
// default policy refuses it, by the address connected to, and says so.
func TestTheDefaultPolicyRefusesPrivateAndLoopbackAddresses(t *testing.T) {
	srv := jarServer(t)
	p := DefaultPolicy()
	p.AllowHTTP = true
	f := fetcher(t, p)
	for _, uri := range []string{
		srv.URL + "/wordcount.jar",
		strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/wordcount.jar", // a name resolving to loopback
	} {
		_, err := f.Fetch(context.Background(), uri, "")
		require.Error(t, err, uri)
		assert.Contains(t, err.Error(), "loopback")
		assert.False(t, IsRetryable(err), "a refused address stays refused")
	}
}

func TestSchemesOutsideThePolicyAreRefused(t *testing.T) {
	srv := jarServer(t)
	f := fetcher(t, Policy{AllowedNetworks: []string{"127.0.0.1/32", "::1/128"}})
	_, err := f.Fetch(context.Background(), srv.URL+"/wordcount.jar", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "http:// is not allowed")
	_, err = f.Fetch(context.Background(), "ftp://example.com/wordcount.jar", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `scheme "ftp" is not allowed`)
}

func TestAnAllowedSourceIsFetchedAndChecked(t *testing.T) {
	srv := jarServer(t)
	dir := t.TempDir()
	f := fetcher(t, Policy{AllowHTTP: true, AllowedNetworks: []string{"127.0.0.1/32"}, MaxBytes: 1024, Dir: dir})
	ctx := context.Background()

	jar, err := f.Fetch(ctx, srv.URL+"/wordcount.jar", sum(jarBytes))
	require.NoError(t, err)
	assert.Equal(t, "wordcount.jar", jar.Name)
	assert.Equal(t, int64(len(jarBytes)), jar.Size)
	assert.Equal(t, jarBytes, read(t, jar))
	jar.Remove()
	assert.Empty(t, files(t, dir), "the file goes once the jar is uploaded")

	_, err = f.Fetch(ctx, srv.URL+"/wordcount.jar", sum([]byte("another jar")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not match jarSHA256")
	assert.False(t, IsRetryable(err))

	_, err = f.Fetch(ctx, srv.URL+"/big.jar", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "larger than the operator's limit of 1024 bytes")

	_, err = f.Fetch(ctx, srv.URL+"/broken.jar", "")
	require.Error(t, err)
	assert.True(t, IsRetryable(err), "a server error may pass")
	assert.Empty(t, files(t, dir), "a refused jar leaves no file behind")
}

func read(t *testing.T, jar *Jar) []byte {
	r, err := jar.Open()
	require.NoError(t, err)
	defer r.Close()
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	return b
}

func files(t *testing.T, dir string) []string {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// A jar streams to its file through a fixed buffer: fetching a 96 MiB jar grows the heap by a
// small fraction of it (issue 25 item 2: the jar was read whole, and a 110 MiB jar passed the
// operator's 512 MiB limit once the upload had copied it twice more).
func TestAJarIsNeverHeldInMemory(t *testing.T) {
	const size = 96 << 20
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		chunk := bytes.Repeat([]byte("j"), 1<<20)
		for i := 0; i < size>>20; i++ {
			_, _ = w.Write(chunk)
		}
	}))
	t.Cleanup(srv.Close)
	f := fetcher(t, Policy{AllowHTTP: true, AllowedNetworks: []string{"127.0.0.1/32"}, MaxBytes: size, Dir: t.TempDir()})
	h := heapwatch.Start()
	jar, err := f.Fetch(context.Background(), srv.URL+"/fat.jar", "")
	growth := h.Growth()
	require.NoError(t, err)
	defer jar.Remove()
	assert.Equal(t, int64(size), jar.Size)
	assert.Less(t, growth, uint64(size/4), "heap grew by %d MiB while fetching a %d MiB jar", growth>>20, size>>20)
}

// Fetches beyond Policy.Concurrency are refused as busy at once: no worker waits for a slow host.
func TestFetchesBeyondTheirBoundAreRefusedAsBusy(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		<-release
		_, _ = w.Write(jarBytes)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	f := fetcher(t, Policy{AllowHTTP: true, AllowedNetworks: []string{"127.0.0.1/32"}, Concurrency: 1, Dir: t.TempDir()})
	go func() { _, _ = f.Fetch(context.Background(), srv.URL+"/slow.jar", "") }()
	require.Eventually(t, func() bool { return len(f.slots) == 1 }, 5*time.Second, time.Millisecond)
	_, err := f.Fetch(context.Background(), srv.URL+"/other.jar", "")
	assert.ErrorIs(t, err, ErrBusy)
}

// A redirect is judged like the first URL: here to a host outside the allowed hosts.
func TestARedirectIsHeldToThePolicy(t *testing.T) {
	srv := jarServer(t)
	f := fetcher(t, Policy{AllowHTTP: true, AllowedHosts: []string{"127.0.0.1"}, AllowedNetworks: []string{"127.0.0.1/32", "::1/128"}})
	_, err := f.Fetch(context.Background(), srv.URL+"/elsewhere.jar", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `host "localhost" is not in the operator's allowed jar hosts`)
}

func TestLocalNamesAJarAlreadyInTheCluster(t *testing.T) {
	f := fetcher(t, DefaultPolicy())
	jar, err := f.Fetch(context.Background(), "local://wordcount.jar", "")
	require.NoError(t, err)
	assert.Equal(t, &Jar{Name: "wordcount.jar", Local: true}, jar)
	_, err = f.Fetch(context.Background(), "local:///opt/flink/usrlib/wordcount.jar", "")
	require.Error(t, err)
}

func TestAllowedHostsMatchNamesAndDomains(t *testing.T) {
	assert.True(t, hostMatches("repo.example.com", ".example.com"))
	assert.True(t, hostMatches("example.com", ".example.com"))
	assert.False(t, hostMatches("badexample.com", ".example.com"))
	assert.True(t, hostMatches("Repo.Example.com", "repo.example.com"))
	assert.False(t, hostMatches("repo.example.com.evil.io", "repo.example.com"))
}

// Jars an earlier process left unfinished in the configured directory are removed at start, and
// nothing else there; without a configured directory (the shared system one) nothing is touched.
func TestLeftoverJarsAreRemovedFromTheConfiguredDirectoryOnly(t *testing.T) {
	dir := t.TempDir()
	left := filepath.Join(dir, "flinkfsm-jar-123.jar")
	other := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(left, []byte("PK"), 0o600))
	require.NoError(t, os.WriteFile(other, []byte("x"), 0o600))
	f, err := NewFetcher(Policy{Dir: dir})
	require.NoError(t, err)
	n, err := f.RemoveLeftovers()
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.NoFileExists(t, left)
	assert.FileExists(t, other)

	f, err = NewFetcher(Policy{})
	require.NoError(t, err)
	n, err = f.RemoveLeftovers()
	require.NoError(t, err)
	assert.Zero(t, n)
}

// A jarURI is the tenant's text: one with control or format characters (a terminal escape, a
// bidirectional override) is refused before anything is fetched, for good, and no error quotes it
// raw, whatever part of it the error is about.
func TestAJarURIsControlCharactersAreRefusedAndNeverEchoedRaw(t *testing.T) {
	f := fetcher(t, Policy{AllowedHosts: []string{"jars.example.com"}})
	for _, uri := range []string{
		"https://jars.example.com/wordcount\x1b[2J\x1b[1A.jar",
		"https://jars.example.com/\u202eraj.exe",
		"https://jars\u202e.example.com/wordcount.jar",
		"https://jars.example.com/word\u0085count.jar",
		"local://wordcount\u202e.jar",
		"https://jars.example.com/wordcount.jar\n",
	} {
		jar, err := f.Fetch(context.Background(), uri, "")
		require.Error(t, err, "%q", uri)
		assert.Nil(t, jar)
		assert.False(t, IsRetryable(err), "refused for good: %q", uri)
		assert.Contains(t, err.Error(), "control or format character", "%q", uri)
		for _, raw := range []string{"\x1b", "\u202e", "\u0085", "\n"} {
			assert.NotContains(t, err.Error(), raw, "%q", uri)
		}
	}
	// A host outside the allowed ones is named quoted, as every part of a jarURI an error quotes.
	_, err := f.Fetch(context.Background(), "https://elsewhere.example.com/wordcount.jar", "")
	require.Error(t, err)
	assert.Equal(t, `jarURI "https://elsewhere.example.com/wordcount.jar": host "elsewhere.example.com" is not in the operator's allowed jar hosts`, err.Error())
}
