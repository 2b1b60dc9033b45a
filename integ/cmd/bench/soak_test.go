package main

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func pairOf(baseline, soak, baselinePeak, soakPeak float64, notRunning int) soakRun {
	return soakRun{
		baseline:        &scaleResult{OperatorSeconds: baseline, MedianRunningSeconds: baseline / 2},
		soak:            &scaleResult{OperatorSeconds: soak, MedianRunningSeconds: soak / 2},
		baselinePeakMiB: baselinePeak, soakPeakMiB: soakPeak, notRunningAtEnd: notRunning,
	}
}

func TestSoakKeepsTheMedianPairsTimesAndTheWorstOfEveryRun(t *testing.T) {
	res := summarizeSoak([]soakRun{pairOf(10, 15, 60, 90, 0), pairOf(10, 11, 70, 200, 2), pairOf(10, 12, 65, 80, 0)})
	if res.BaselineSeconds != 10 || res.SoakSeconds != 12 || res.Ratio != 1.2 || res.SoakMedianSeconds != 6 {
		t.Errorf("kept %.0f s / %.0f s = %.2f×, want the median pair's 12 s / 10 s", res.SoakSeconds, res.BaselineSeconds, res.Ratio)
	}
	if res.PeakRSSMiB != 200 || res.BaselinePeakRSSMiB != 70 || res.NotRunningAtEnd != 2 {
		t.Errorf("peak %.0f MiB (alone %.0f), %d not Running; want the worst of every run: 200, 70, 2",
			res.PeakRSSMiB, res.BaselinePeakRSSMiB, res.NotRunningAtEnd)
	}
	pairs := soakPairsOf([]soakRun{pairOf(10, 15, 0, 0, 0), pairOf(10, 11, 0, 0, 0), pairOf(10, 12, 0, 0, 0)})
	if !pairs[2].Kept || pairs[0].Kept || pairs[1].Kept || pairs[0].Ratio != 1.5 {
		t.Errorf("pairs %+v, want the third (1.2×) kept", pairs)
	}
}

func TestSoakFiguresAreJudgedByIssue25sTargets(t *testing.T) {
	good := &soakResult{N: 10, HostileTenants: 10, BaselineSeconds: 10, SoakSeconds: 11.9, Ratio: 1.19, PeakRSSMiB: 120, HoldSeconds: 120,
		Pairs: []soakPair{{Ratio: 1.19, Kept: true}}}
	r := &results{Soak: good}
	r.evaluate()
	if !r.TargetsMet || len(r.Figures) != 6 {
		t.Fatalf("targets met %v with figures %+v", r.TargetsMet, r.Figures)
	}
	for _, miss := range []func(*soakResult){
		func(s *soakResult) { s.Ratio = 1.21 },
		func(s *soakResult) { s.PeakRSSMiB = 257 },
		func(s *soakResult) { s.PeakRSSMiB = 0 }, // unreadable is no pass
		func(s *soakResult) { s.Restarts = 1 },
		func(s *soakResult) { s.NotRunningAtEnd = 1 },
	} {
		s := *good
		miss(&s)
		r := &results{Soak: &s}
		r.evaluate()
		if r.TargetsMet {
			t.Errorf("%+v met every target", s)
		}
	}
}

func TestSoakReportNamesEachTenantAndEachExit(t *testing.T) {
	s := &soakResult{N: 10, HostileTenants: 2, Ratio: 1.1, HoldSeconds: 60,
		Tenants: []tenantResult{
			{Name: "huge-job", Kind: "FlinkApplication", Phase: "Submitting", What: "huge answers",
				Requests: map[string]int64{"GET /jobs/:id": 7, "GET /jobs": 2}, Error: "GetJob: answer refused"},
			{Name: "jar-stall", Kind: "FlinkSessionJob", What: "stalls", Requests: map[string]int64{"GET /stall.jar": 1}},
		},
		Exits:    []operatorExit{{AtSeconds: 42, Status: "signal: killed", LogTail: []string{"fatal error: runtime: out of memory"}}},
		Restarts: 1,
	}
	r := &results{Soak: s}
	r.evaluate()
	var out bytes.Buffer
	r.print(&out)
	for _, want := range []string{"huge-job", "GET /jobs/:id 7, GET /jobs 2", "last error: GetJob: answer refused",
		"jar-stall", "(no status)", "exit 1 at 42 s: signal: killed", "out of memory", "(e) operator restarts", "MISSED"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report does not say %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "(a) phases") {
		t.Error("a soak-only report prints (a)")
	}
}

func TestProcStatusMiB(t *testing.T) {
	status := "Name:\tflinkfsm\nVmPeak:\t 1234 kB\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n"
	if hwm, rss := procStatusMiB(status, "VmHWM"), procStatusMiB(status, "VmRSS"); hwm != 200 || rss != 100 {
		t.Errorf("VmHWM %.1f MiB, VmRSS %.1f MiB; want 200 and 100", hwm, rss)
	}
	if v := procStatusMiB(status, "VmSwap"); v != 0 {
		t.Errorf("an absent field read %.1f", v)
	}
}

func TestHostileTenantsAreThirteenEachInANamespaceOfItsOwn(t *testing.T) {
	tenants := hostileTenants()
	seen := map[string]bool{}
	for _, tn := range tenants {
		if seen[tn.namespace()] {
			t.Errorf("namespace %s twice", tn.namespace())
		}
		seen[tn.namespace()] = true
		hostileJobManager := len(tn.faults.Hostile) > 0 || len(tn.faults.Hang) > 0 || tn.load != nil
		if (tn.jarPath == "") == !(hostileJobManager || tn.spec != nil) {
			t.Errorf("%s is neither a hostile JobManager, a hostile spec nor a hostile jar host, or both", tn.name)
		}
	}
	if len(tenants) != 13 {
		t.Errorf("%d hostile tenants, issues 25 and 55 ask for 13", len(tenants))
	}
}

// The dense answer stays within both caps and comes close to each: the client decodes it.
func TestDenseJobIsJustUnderBothCaps(t *testing.T) {
	h := denseJob()
	vertices := h.Bytes / (len(h.Element) + 1)
	// Each vertex is two values; the real answer's other members are about 60.
	if values := 2*vertices + 60; values > capJobValues || values < capJobValues-1024 {
		t.Errorf("%d vertices make %d values, want just under %d", vertices, values, capJobValues)
	}
	if h.Bytes > capJob || h.Bytes < capJob-1024 {
		t.Errorf("%d bytes, want just under %d", h.Bytes, capJob)
	}
}

func TestJarHosts(t *testing.T) {
	hosts, err := startJarHosts(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer hosts.stop()
	client := &http.Client{Timeout: 5 * time.Second}

	resp, err := client.Get(hosts.uri(jarLarge))
	if err != nil {
		t.Fatal(err)
	}
	jar, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || len(jar) != 1<<20 || !bytes.HasPrefix(jar, []byte("PK\x03\x04")) || resp.ContentLength != 1<<20 {
		t.Errorf("the large jar: %d bytes (Content-Length %d), %v", len(jar), resp.ContentLength, err)
	}

	if _, err := client.Get(hosts.uri(jarRedirect)); err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Errorf("the redirect loop: %v, want a client that gives up on redirects", err)
	}
	if n := hosts.requestsTo(jarRedirect); n < 10 {
		t.Errorf("the redirect loop served %d requests", n)
	}

	impatient := &http.Client{Timeout: 300 * time.Millisecond}
	var timeout interface{ Timeout() bool }
	if _, err := impatient.Get(hosts.uri(jarStall)); !errors.As(err, &timeout) || !timeout.Timeout() {
		t.Errorf("the stalling host: %v, want a timeout", err)
	}

	impatient.Timeout = 1500 * time.Millisecond
	resp, err = impatient.Get(hosts.uri(jarDrip))
	if err != nil {
		t.Fatalf("the dripping host sent no headers: %v", err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ContentLength != dripJarBytes || err == nil || len(got) > 4 {
		t.Errorf("the dripping host: Content-Length %d, %d bytes in 1.5 s, %v", resp.ContentLength, len(got), err)
	}
}

func TestSelectTenantsByName(t *testing.T) {
	all := hostileTenants()
	if got, _ := selectTenants(all, ""); len(got) != len(all) {
		t.Errorf("the default selects %d of %d", len(got), len(all))
	}
	if got, err := selectTenants(all, "none"); len(got) != 0 || err != nil {
		t.Errorf("none selects %d (%v)", len(got), err)
	}
	if got, err := selectTenants(all, "drip, silent"); err != nil || len(got) != 2 || got[0].name != "drip" || got[1].name != "silent" {
		t.Errorf("drip, silent: %v (%v)", got, err)
	}
	if _, err := selectTenants(all, "drip,nobody"); err == nil || !strings.Contains(err.Error(), "huge-job") {
		t.Errorf("an unknown name: %v, want an error listing the tenants", err)
	}
}

func TestFlinkCallsSinceAnEarlierScrape(t *testing.T) {
	before := flinkCallTotals{
		calls:  map[string]struct{ count, sum float64 }{"GetJob": {10, 0.1}},
		errors: map[string]float64{"GetJob timeout": 1},
	}
	after := flinkCallTotals{
		calls:  map[string]struct{ count, sum float64 }{"GetJob": {20, 30.1}, "GetJobs": {5, 0.01}},
		errors: map[string]float64{"GetJob timeout": 7, "GetJob decode": 2},
	}
	got := after.since(before).describe()
	if want := "GetJob 10 × 3000 ms, GetJobs 5 × 2 ms; failed: GetJob timeout 6, GetJob decode 2"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := (flinkCalls{}).describe(); got != "none recorded" {
		t.Errorf("no calls: %q", got)
	}
}
