package crdtest

import (
	"context"
	"testing"
)

// A periodic snapshot's schedule obeys intervalSeconds' minimum of 60 s: an @every shorter than
// that is refused at apply, naming the field, in every kind that takes schedules; every other
// schedule, which names whole minutes, and an @every of 60 s or more, is admitted. (What CEL cannot
// read here the operator refuses, naming the field: periodic_snapshots.go.)
func TestSchedulesMoreFrequentThanTheLeastIntervalAreRefused(t *testing.T) {
	refused := []string{"@every 1s", "@every 59s", "@every 59.9s", "@every 500ms", "@every 0s", "@every 1m-1s",
		"CRON_TZ=UTC @every 30s", "TZ=Europe/Berlin   @every 1s", "@every 30s1ms"}
	admitted := []string{"@every 60s", "@every 1m", "@every 1m0.5s", "@every 2h", "@every 1h30m", "* * * * *", "*/15 * * * *",
		"@hourly", "@daily", "CRON_TZ=UTC @every 90s", "0 2 * * *"}
	kinds := []struct {
		kind string
		obj  map[string]interface{}
		path []string
	}{
		{"FlinkApplication", readObject(t, "examples/wordcount.yaml"), []string{"spec"}},
		{"FlinkSessionJob", sessionExample(t, "FlinkSessionJob", "wordcount"), []string{"spec", "job"}},
	}
	for _, k := range kinds {
		crd := crdFor(t, k.kind)
		for _, field := range []string{"periodicSavepoint", "periodicCheckpoint"} {
			path := append(append([]string(nil), k.path...), field)
			for _, s := range refused {
				t.Run(k.kind+"/"+field+"/"+s, func(t *testing.T) {
					r := crd.Create(context.Background(), edited(k.obj, set(map[string]interface{}{"schedule": s}, path...)))
					checkRefused(t, r.Errs, joinPath(path)+".schedule", "an @every schedule must be at least 60s")
				})
			}
			for _, s := range admitted {
				t.Run(k.kind+"/"+field+"/"+s, func(t *testing.T) {
					if r := crd.Create(context.Background(), edited(k.obj, set(map[string]interface{}{"schedule": s}, path...))); len(r.Errs) > 0 {
						t.Errorf("refused:\n%v", r.Errs.ToAggregate())
					}
				})
			}
			t.Run(k.kind+"/"+field+"/intervalSeconds 59", func(t *testing.T) {
				r := crd.Create(context.Background(), edited(k.obj, set(map[string]interface{}{"intervalSeconds": int64(59)}, path...)))
				checkRefused(t, r.Errs, joinPath(path)+".intervalSeconds", "greater than or equal to 60")
			})
		}
	}
}

func joinPath(path []string) string {
	out := ""
	for i, p := range path {
		if i > 0 {
			out += "."
		}
		out += p
	}
	return out
}
