package flinksim

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestTimelineOverlaps(t *testing.T) {
	tests := []struct {
		name string
		// play drives two JobManagers of one app (and one of another app).
		play         func(t *testing.T, a, b, other *harness)
		wantOverlaps int
		wantOpen     bool // the overlap is still ongoing
	}{
		{"cancel before submit", func(t *testing.T, a, b, other *harness) {
			id := a.runToRunning(nil)
			a.call("PATCH", "/jobs/"+id, nil)
			a.step(300 * time.Millisecond)
			b.runToRunning(nil)
			other.runToRunning(nil)
		}, 0, false},
		{"blue-green overlap", func(t *testing.T, a, b, other *harness) {
			id := a.runToRunning(nil)
			b.runToRunning(nil)
			a.call("PATCH", "/jobs/"+id, nil)
			a.step(time.Second)
		}, 1, false},
		{"both still running", func(t *testing.T, a, b, other *harness) {
			a.runToRunning(nil)
			b.runToRunning(nil)
		}, 1, true},
		{"crash ends the old job", func(t *testing.T, a, b, other *harness) {
			a.runToRunning(nil)
			a.jm.Crash()
			b.runToRunning(nil)
		}, 0, false},
		// Flink refuses the restore within the run request, as real Flink does: the job is FAILED before
		// the answer, and never was beside the old one for any time.
		{"a restore refused in the run request does not overlap", func(t *testing.T, a, b, other *harness) {
			a.runToRunning(nil)
			b.runRefused(map[string]any{"savepointPath": "s3://nowhere/sp"})
			b.expectState(b.jm.Jobs()[0].ID, "FAILED")
		}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(epoch)
			tl := NewTimeline()
			storage := NewStorage()
			mk := func(name, app string) *harness {
				jm := NewJobManager(Options{Clock: clk, Name: name, Timeline: tl, AppKey: app, Storage: storage, TaskManagers: 4})
				return &harness{t: t, clk: clk, jm: jm, srv: newServer(t, jm)}
			}
			a, b, other := mk("jm-a", "ns/app"), mk("jm-b", "ns/app"), mk("jm-c", "ns/other")
			tc.play(t, a, b, other)
			clk.Step(10 * time.Second) // lazily due transitions are recorded at their own time
			got := tl.Overlaps("ns/app")
			if len(got) != tc.wantOverlaps {
				t.Fatalf("overlaps %+v, want %d", got, tc.wantOverlaps)
			}
			if len(got) == 1 && got[0].To.IsZero() != tc.wantOpen {
				t.Fatalf("overlap %+v, open = %v", got[0], tc.wantOpen)
			}
			if len(tl.Overlaps("ns/other")) != 0 {
				t.Fatal("overlap in a single-job app")
			}
			// Two jobs at most here: each overlap is one more job alive at once.
			if most := tl.MostAlive("ns/app"); most != tc.wantOverlaps+1 {
				t.Fatalf("most alive at once %d, want %d", most, tc.wantOverlaps+1)
			}
		})
	}
}

func TestTimelineRecordsJobs(t *testing.T) {
	tl := NewTimeline()
	h := newHarness(t, Options{Timeline: tl, AppKey: "ns/app", Name: "jm-1"})
	id := h.run(map[string]any{"parallelism": 2})
	h.step(time.Minute) // nobody asks the JobManager; the Timeline catches up itself
	jobs := tl.Jobs("ns/app")
	if len(jobs) != 1 || jobs[0].JobID != id || jobs[0].JobManager != "jm-1" || jobs[0].Parallelism != 2 {
		t.Fatalf("jobs %+v", jobs)
	}
	var states []string
	for _, s := range jobs[0].States {
		states = append(states, s.State)
	}
	if len(states) != 3 || states[0] != "INITIALIZING" || states[2] != "RUNNING" ||
		!jobs[0].States[2].Time.Equal(epoch.Add(300*time.Millisecond)) {
		t.Fatalf("states %+v", jobs[0].States)
	}
	if _, ended := jobs[0].AliveUntil(); ended {
		t.Fatal("running job reported ended")
	}
}
