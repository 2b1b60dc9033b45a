// Package jobstate is the status side of one job, whatever the kind that owns it: its deployment
// records (the stable one and the candidate) and the fields derived from them, the settings a
// kind derives from its spec for the job handlers (Settings) and the savepoint format they ask
// for, and what a pass remembers of the job's deployment records across passes
// (RecordedVersions). It knows no kind and no phase machine.
package jobstate
