package client

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// rbacVerb is the Kubernetes verb the API server's service proxy authorizes an HTTP method as.
var rbacVerb = map[string]string{
	http.MethodGet: "get", http.MethodHead: "get", http.MethodPost: "create", http.MethodPut: "update",
	http.MethodPatch: "patch", http.MethodDelete: "delete",
}

// verbsSent calls every method of API against a server that records the HTTP methods it is sent:
// the verbs services/proxy must grant for flinkUrlMode APIServerProxy. A method added to API is
// called here without a change to this test.
func verbsSent(t *testing.T) []string {
	var mu sync.Mutex
	seen := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Method] = true
		mu.Unlock()
		http.Error(w, `{"errors":["recorded"]}`, http.StatusBadRequest)
	}))
	t.Cleanup(srv.Close)
	var api API = New(DefaultConfig(), nil)
	v := reflect.ValueOf(api)
	ctxType := reflect.TypeOf((*context.Context)(nil)).Elem()
	readerType := reflect.TypeOf((*io.Reader)(nil)).Elem()
	for i := 0; i < v.NumMethod(); i++ {
		m := v.Method(i)
		args := make([]reflect.Value, m.Type().NumIn())
		for j := range args {
			in := m.Type().In(j)
			switch {
			case in == ctxType:
				args[j] = reflect.ValueOf(context.Background())
			case in == readerType:
				args[j] = reflect.ValueOf(strings.NewReader("jar"))
			case in.Kind() == reflect.String && j == 1:
				args[j] = reflect.ValueOf(srv.URL)
			case in.Kind() == reflect.String:
				args[j] = reflect.ValueOf("x.jar")
			case in.Kind() == reflect.Map && in.Key().Kind() == reflect.String:
				// A request the client validates (resource requirements) needs an entry to be sent.
				mv := reflect.MakeMap(in)
				mv.SetMapIndex(reflect.ValueOf("v").Convert(in.Key()), reflect.Zero(in.Elem()))
				args[j] = mv
			default:
				args[j] = reflect.Zero(in)
			}
		}
		m.Call(args)
	}
	var verbs []string
	for method := range seen {
		verbs = append(verbs, rbacVerb[method])
	}
	sort.Strings(verbs)
	return verbs
}

// The RBAC for flinkUrlMode APIServerProxy grants services/proxy exactly the verbs the client sends:
// a cancel (PATCH), a jar's clean-up (DELETE) or a rescale (PUT) refused with 403 leaves a job
// running or an update stuck. The chart's copy is held equal to deploy/proxy by deploy/helmtest.
func TestTheProxyRBACGrantsExactlyTheVerbsTheClientSends(t *testing.T) {
	sent := verbsSent(t)
	raw, err := os.ReadFile("../../../../deploy/proxy/rbac.yaml")
	require.NoError(t, err)
	var granted []string
	for _, doc := range strings.Split(string(raw), "\n---") {
		var role struct {
			Kind  string `json:"kind"`
			Rules []struct {
				Resources []string `json:"resources"`
				Verbs     []string `json:"verbs"`
			} `json:"rules"`
		}
		require.NoError(t, yaml.Unmarshal([]byte(doc), &role))
		for _, r := range role.Rules {
			for _, res := range r.Resources {
				if res == "services/proxy" {
					granted = append(granted, r.Verbs...)
				}
			}
		}
	}
	sort.Strings(granted)
	require.Equal(t, sent, granted, "deploy/proxy/rbac.yaml grants services/proxy %v; the client sends %v", granted, sent)
}
