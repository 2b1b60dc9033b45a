package flinksim

import "testing"

func TestFleetCountsRequestsPerCluster(t *testing.T) {
	e := newFleetEnv(t)
	e.create(pod("app", "h1", RoleJobManager, "app-h1-jm", "flink:1.20", true))
	e.waitUp("app-h1", 0)
	before := e.f.Requests()["flink/app-h1"] // waitUp's own calls
	for range 3 {
		if status, _, err := e.request("GET", "/"+testNS+"/app-h1/v1/jobs/overview", ""); err != nil || status != 200 {
			t.Fatalf("jobs/overview: %d %v", status, err)
		}
	}
	// A call to a cluster that is down is still a call the client made. (A POST: net/http sends an
	// idempotent request again when a reused connection closes without an answer.)
	if _, _, err := e.request("POST", "/"+testNS+"/gone-h2/jars/x.jar/run", ""); err == nil {
		t.Fatal("a cluster without a JobManager answered")
	}
	got := e.f.Requests()
	if got["flink/app-h1"]-before != 3 || got["flink/gone-h2"] != 1 {
		t.Fatalf("requests %v (before: %d to app-h1), want 3 more to app-h1 and 1 to gone-h2", got, before)
	}
	byEndpoint := e.f.RequestsByEndpoint(testNS)
	if byEndpoint["GET /jobs/overview"] != 3 || byEndpoint["POST /jars/:jar/run"] != 1 {
		t.Fatalf("requests by endpoint %v, want 3 GET /jobs/overview and 1 POST /jars/:jar/run", byEndpoint)
	}
	// A group of applications in the namespace, told apart by their services.
	gone := e.f.RequestsByEndpointOf(testNS, func(service string) bool { return service == "gone-h2" })
	if len(gone) != 1 || gone["POST /jars/:jar/run"] != 1 {
		t.Fatalf("requests by endpoint of gone-h2 %v, want only its POST /jars/:jar/run", gone)
	}
	for path, want := range map[string]string{
		"/v1/jobs/0123456789abcdef0123456789abcdef/checkpoints/details/42": "/jobs/:id/checkpoints/details/:n",
		"/jobs/0123456789ABCDEF0123456789ABCDEF/savepoints":                "/jobs/:id/savepoints",
		"/overview": "/overview",
	} {
		if got := endpointPath(path); got != want {
			t.Errorf("endpointPath(%q) = %q, want %q", path, got, want)
		}
	}
}
