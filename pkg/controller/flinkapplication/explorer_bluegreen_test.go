package flinkapplication

import (
	"time"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
)

// notGivenUp are the jobs that were not a BlueGreen version given up: one that started beside
// another job of the object, ended before start, and was never the stable deployment's. A new
// version that fails is rolled back and the deployed job goes on from its own state
// (docs/blue-green.md), so what the given-up version completed is not state a later job rewinds,
// as a torn-down version's is not (explorer seed 140309: after the deployed job was lost, a resume
// started the new version's spec from the deployed job's newest checkpoint, older than the
// given-up version's).
func (x *explorer) notGivenUp(jobs, all []flinksim.JobRecord, start time.Time) []flinksim.JobRecord {
	var out []flinksim.JobRecord
	for _, j := range jobs {
		end, ended := j.AliveUntil()
		if ended && end.Before(start) && !x.history.promoted[j.JobID] && startedBeside(j, all) {
			continue
		}
		out = append(out, j)
	}
	return out
}

// startedBeside tells whether another job of the object was alive when j started.
func startedBeside(j flinksim.JobRecord, all []flinksim.JobRecord) bool {
	from := j.AliveFrom()
	for _, o := range all {
		if o.JobID == j.JobID || !o.AliveFrom().Before(from) {
			continue
		}
		if end, ended := o.AliveUntil(); !ended || end.After(from) {
			return true
		}
	}
	return false
}
