//go:build linux

package localcluster

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
)

// Another cluster may bind a port between our picking it and the component binding it. Start
// must notice the component lost the race, pick again and succeed, instead of failing or, worse,
// talking to the other cluster's component.
func TestStartRetriesWhenAPortIsTaken(t *testing.T) {
	squatter, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer squatter.Close()
	taken := squatter.Addr().(*net.TCPAddr).Port

	var mu sync.Mutex
	handedOut := map[int]bool{}
	pick := func(n int) ([]int, error) {
		ports, err := freePorts(n)
		mu.Lock()
		defer mu.Unlock()
		// etcd asks for two ports, and kube-apiserver is the first to ask for one: each gets
		// the squatted port on its first attempt.
		if err == nil && n > 0 && !handedOut[n] {
			handedOut[n] = true
			ports[0] = taken
		}
		return ports, err
	}
	log := &syncWriter{}
	c := StartForTest(t, Options{Nodes: 1, Log: log, pickPorts: pick})
	t.Log(log.String())
	for _, want := range []string{"etcd lost a port race", "kube-apiserver lost a port race"} {
		if got := log.String(); !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
	if _, _, err := c.Kubectl(context.Background(), "get", "nodes"); err != nil {
		t.Fatal(err)
	}
}

type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
