package main

import (
	"testing"
	"time"
)

func TestHalfTheFleetCheckpointsEveryOtherApplication(t *testing.T) {
	keys := []string{"ns/app-0000", "ns/app-0001", "ns/app-0002", "ns/app-0003", "ns/app-0004"}
	idle, cp := splitFleet(keys, 0.5)
	if cp == nil || len(cp.keys) != 2 || cp.keys[0] != "ns/app-0001" || cp.keys[1] != "ns/app-0003" {
		t.Fatalf("checkpointing half %+v, want app-0001 and app-0003", cp)
	}
	if len(idle.keys) != 3 || !idle.shared || !cp.shared {
		t.Fatalf("idle half %+v, want the other three, both halves sharing their namespace", idle)
	}
	idle, cp = splitFleet(keys, 0)
	if cp != nil || len(idle.keys) != 5 || idle.shared {
		t.Fatalf("without a fraction: idle %+v, checkpointing %+v; want every app idle, alone in its namespace", idle, cp)
	}
	count := 0
	for i := range 10000 {
		if checkpoints(i, 0.5) {
			count++
		}
	}
	if count != 5000 {
		t.Fatalf("%d of 10,000 checkpoint at 0.5, want 5,000", count)
	}
}

func TestWaitsAndTheClusterScaleWithN(t *testing.T) {
	if got := defaultTimeout(1000); got != 15*time.Minute {
		t.Errorf("timeout at 1,000: %s, want 15m", got)
	}
	if got := defaultTimeout(10000); got != 50*time.Minute {
		t.Errorf("timeout at 10,000: %s, want 50m", got)
	}
	o := options{n: 10000, savepointing: 0, checkpointing: 0, soakN: 100}
	if got := applicationsAtOnce(o); got != 10001 {
		t.Errorf("applications at once for N=10000 alone: %d, want 10,001", got)
	}
	o = options{n: 1000, savepointing: 0.1, checkpointing: 10, soak: true, soakN: 1000}
	if got := applicationsAtOnce(o); got != 1111 {
		t.Errorf("applications at once for N=1000 with its groups: %d, want 1,111", got)
	}
}

func TestTargetsByFleetSize(t *testing.T) {
	for _, c := range []struct {
		n      int
		ratio  float64
		rssMiB float64
	}{{100, 1.5, 150}, {1000, 2, 150}, {2000, 2, 1024}, {10000, 1.5, 1024}} {
		if got := targetsFor(c.n); got.ratio != c.ratio || got.rssMiB != c.rssMiB {
			t.Errorf("targets at %d: %+v, want ratio %.1f and RSS %.0f MiB", c.n, got, c.ratio, c.rssMiB)
		}
	}
}

func TestAThousandApplicationsANamespace(t *testing.T) {
	b := &bench{perNamespace: 1000}
	for i, want := range map[int]string{0: "bench-apps", 999: "bench-apps", 1000: "bench-apps-1", 9999: "bench-apps-9"} {
		if got := b.fleetNamespace("bench-apps", i); got != want {
			t.Errorf("application %d in %s, want %s", i, got, want)
		}
	}
	keys := []string{"bench-apps/app-0000", "bench-apps-1/app-1000", "bench-apps/app-0001", "bench-apps-1/app-1001"}
	if got := namespaces(keys); len(got) != 2 || got[0] != "bench-apps" || got[1] != "bench-apps-1" {
		t.Errorf("namespaces of %v: %v", keys, got)
	}
}
