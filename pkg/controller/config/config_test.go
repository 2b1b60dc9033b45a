package config

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestURLResolver(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"service DNS by default", Config{}, "http://app-1a2b3c4d.ns:8081"},
		{"API server proxy", Config{FlinkURLMode: URLModeAPIServerProxy}, "https://api:6443/api/v1/namespaces/ns/services/app-1a2b3c4d:8081/proxy"},
		{"Lyft kubectl proxy", Config{UseKubectlProxy: true, ProxyPort: 8001}, "http://localhost:8001/api/v1/namespaces/ns/services/app-1a2b3c4d:8081/proxy"},
		{"template", Config{FlinkURLMode: URLModeTemplate, FlinkURLTemplate: "http://127.0.0.1:9000/{{.Namespace}}/{{.Service}}/"}, "http://127.0.0.1:9000/ns/app-1a2b3c4d"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resolve, err := c.cfg.URLResolver("https://api:6443/")
			require.NoError(t, err)
			assert.Equal(t, c.want, resolve("ns", "app-1a2b3c4d", 8081))
		})
	}
}

func TestValidateRejectsUnknownModeAndBadTemplate(t *testing.T) {
	assert.Error(t, (&Config{Workers: 1, FlinkURLMode: "Carrier pigeon"}).Validate())
	assert.Error(t, (&Config{Workers: 1, FlinkURLMode: URLModeTemplate, FlinkURLTemplate: "{{.Nope"}).Validate())
	assert.Error(t, (&Config{Workers: -1}).Validate())
	assert.NoError(t, Default().Validate())
}

func TestNamespaces(t *testing.T) {
	assert.Nil(t, (&Config{}).Namespaces())
	assert.Equal(t, []string{"a", "b"}, (&Config{LimitNamespace: " a, ,b"}).Namespaces())
}

func TestWorkersFollowTheCoresUnlessSet(t *testing.T) {
	for cores, want := range map[int]int{1: 12, 2: 12, 3: 18, 4: 24, 5: 30, 6: 32, 64: 32} {
		assert.Equal(t, want, WorkersForCores(cores), "%d cores", cores)
	}
	assert.Equal(t, WorkersForCores(runtime.GOMAXPROCS(0)), Default().WorkerCount())
	assert.Equal(t, 7, (&Config{Workers: 7}).WorkerCount())
}
