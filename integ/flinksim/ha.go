package flinksim

import (
	"sort"
	"strings"
	"time"
)

// JobManager processes end and start again; what survives depends on HA. Flink
// HA (high-availability.type: kubernetes or zookeeper) keeps, per cluster id,
// the submitted JobGraphs, each job's latest completed checkpoint and the job
// result store outside the process, and a new process recovers every job that
// has no result yet under the same job id.

// haStore is one cluster id's HA data, held in Storage because it outlives
// JobManager processes and pods as the HA ConfigMaps and storageDir do.
type haStore struct {
	jobs    map[string]*haJob
	results map[string]bool // job ids that reached a globally terminal state
	seq     int
	// apps are the unfinished PackagedProgramApplications (2.3+: the application store), which a
	// JobManager that takes over runs again; appResults the application result store.
	apps       map[string]*haApplication
	appResults map[string]bool
}

// haApplication is what HA keeps of a PackagedProgramApplication to run its main() again.
type haApplication struct {
	id, name  string
	decoupled bool
	req       submitRequest
}

type haJob struct {
	req        submitRequest
	seq        int // submission order, which recovery keeps
	checkpoint *haCheckpoint
}

// haCheckpoint is the latest completed checkpoint of a job, which recovery restores.
type haCheckpoint struct {
	id   int64
	path string
}

// haKey returns the key of the cluster's HA store, or "" when HA is off.
func haKey(opts Options, name string) string {
	if id := haClusterID(opts.FlinkConfig, opts.haClusterID, name); id != "" {
		return opts.haScope + "/" + id
	}
	return ""
}

// haClusterID is the cluster id Flink HA runs under with this configuration: kubernetes.cluster-id,
// else high-availability.cluster-id, else the first of the fallbacks; "" when HA is off.
func haClusterID(cfg map[string]string, fallbacks ...string) string {
	kind := strings.TrimSpace(cfg["high-availability.type"])
	if kind == "" {
		kind = strings.TrimSpace(cfg["high-availability"])
	}
	if kind == "" || strings.EqualFold(kind, "none") {
		return ""
	}
	for _, id := range append([]string{cfg["kubernetes.cluster-id"], cfg["high-availability.cluster-id"]}, fallbacks...) {
		if id = strings.TrimSpace(id); id != "" {
			return id
		}
	}
	return ""
}

// haForget drops what HA kept under key: the pointers to it are gone.
func (s *Storage) haForget(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.ha, key)
}

// haStoreFor returns the store under key, creating it. Callers hold s.mu.
func (s *Storage) haStoreFor(key string) *haStore {
	if s.ha == nil {
		s.ha = map[string]*haStore{}
	}
	st := s.ha[key]
	if st == nil {
		st = &haStore{jobs: map[string]*haJob{}, results: map[string]bool{}, apps: map[string]*haApplication{}, appResults: map[string]bool{}}
		s.ha[key] = st
	}
	return st
}

func (s *Storage) haSubmitted(key string, req submitRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.haStoreFor(key)
	st.seq++
	req.userConfig = copyMap(req.userConfig)
	req.args = append([]string(nil), req.args...)
	st.jobs[req.jobID] = &haJob{req: req, seq: st.seq}
}

func (s *Storage) haCheckpointed(key, jobID string, c haCheckpoint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if hj := s.haStoreFor(key).jobs[jobID]; hj != nil {
		hj.checkpoint = &c
	}
}

// haFinished moves a job from the JobGraph store to the job result store.
func (s *Storage) haFinished(key, jobID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.haStoreFor(key)
	delete(st.jobs, jobID)
	st.results[jobID] = true
}

func (s *Storage) haHasResult(key, jobID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.haStoreFor(key).results[jobID]
}

// haRerun moves a job's HA entry to the id it is run again under.
func (s *Storage) haRerun(key, from, to string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.haStoreFor(key)
	if hj := st.jobs[from]; hj != nil {
		delete(st.jobs, from)
		hj.req.jobID = to
		st.jobs[to] = hj
	}
}

func (s *Storage) haApplicationSubmitted(key string, a haApplication) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a.req.userConfig = copyMap(a.req.userConfig)
	s.haStoreFor(key).apps[a.id] = &a
}

// haApplicationEnded moves an application to the application result store.
func (s *Storage) haApplicationEnded(key, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.haStoreFor(key)
	delete(st.apps, id)
	st.appResults[id] = true
}

func (s *Storage) haHasApplicationResult(key, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.haStoreFor(key).appResults[id]
}

// haApplications lists the unfinished PackagedProgramApplications, by id.
func (s *Storage) haApplications(key string) []haApplication {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []haApplication
	for _, a := range s.haStoreFor(key).apps {
		out = append(out, *a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// haJobs lists the jobs to recover, in submission order.
func (s *Storage) haJobs(key string) []haJob {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []haJob
	for _, hj := range s.haStoreFor(key).jobs {
		out = append(out, *hj)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// Crash kills the JobManager process and starts it again at once, with no
// leader-election window. Without HA every job, operation and uploaded jar is
// gone and the Timeline marks the jobs lost; with HA the jobs are recovered as
// after Restart. Snapshots already written to Storage stay.
func (jm *JobManager) Crash() { jm.restartProcess(0) }

// Restart restarts the JobManager process in its pod, as after an OOMKill: it
// loses everything Crash loses, then answers every REST call with 503 (no
// leader yet) for Timings.Recovery, after which it serves again and, with HA,
// recovers its jobs.
func (jm *JobManager) Restart() { jm.restartProcess(jm.timings.Recovery) }

func (jm *JobManager) restartProcess(leaderless time.Duration) {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	now := jm.exit()
	jm.unavailableUntil = now.Add(leaderless)
	if jm.haKey != "" {
		jm.recoverAt = jm.unavailableUntil
	}
	jm.advance()
}

// Stop ends the process for good, as when its pod goes away; with HA its
// jobs wait in the HA store for the cluster's next JobManager.
func (jm *JobManager) Stop() { jm.stop() }

func (jm *JobManager) stop() {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	jm.exit()
}

// exit ends the current process. Callers hold jm.mu.
func (jm *JobManager) exit() time.Time {
	now := jm.advance()
	for _, j := range jm.jobs {
		if j.timelineHandle < 0 || isGloballyTerminal(j.state) {
			continue
		}
		if jm.haKey != "" {
			// The job is not lost: it is suspended until a JobManager recovers it.
			jm.timeline.recordState(j.timelineHandle, stateSuspended, now)
		} else {
			jm.timeline.recordLost(j.timelineHandle, now)
		}
	}
	jm.reset(now)
	return now
}

// recoverJobs resubmits every job of the HA store that has no result yet,
// each restoring its latest completed checkpoint (or, lacking one, the
// savepoint it was submitted with). From 2.3 on it first runs every unfinished
// PackagedProgramApplication again, whose main() finds its job by its fixed id
// and recovers it after Faults.RerunTakes; every other job comes back in a
// SingleJobApplication of its own id.
func (jm *JobManager) recoverJobs(at time.Time) {
	jm.recoverAt = time.Time{}
	faults := jm.currentFaults()
	apps := hasApplications(jm.flinkVersion)
	rerun := map[string]bool{}
	if apps {
		for _, ha := range jm.storage.haApplications(jm.haKey) {
			if jm.application(ha.id) == nil {
				a := jm.startApplication(ha.id, ha.name, true, at)
				a.decoupled, a.req = ha.decoupled, ha.req
			}
			rerun[ha.id] = true
		}
	}
	for _, hj := range jm.storage.haJobs(jm.haKey) {
		req := hj.req
		if jm.job(req.jobID) != nil {
			continue
		}
		rec := &recovery{checkpoint: hj.checkpoint}
		if apps && faults.RerunUnderNewJobID {
			rec.rerunOf = req.jobID
			req.jobID = randomHex(32)
			jm.storage.haRerun(jm.haKey, hj.req.jobID, req.jobID)
			rerun[req.applicationID] = true
		}
		if d := faults.RerunTakes; apps && d > 0 && rerun[req.applicationID] {
			if jm.application(req.applicationID) == nil {
				jm.startApplication(req.applicationID, "SingleJobApplication("+jm.jobName(req)+")", false, at)
			}
			jm.pending = append(jm.pending, &pendingSubmit{req: req, at: at.Add(d), rec: rec})
			continue
		}
		jm.submit(at, req, rec)
	}
}

// recovery marks a submission as an HA recovery of a known job.
type recovery struct {
	checkpoint *haCheckpoint // nil: restore the submitted savepointPath, if any
	rerunOf    string        // the job id it ran under before, when it runs again under a new one
}

// isDuplicate tells whether the Dispatcher already knows a job id: running,
// about to register, or with a result in the (per-process or HA) job result store.
// From 2.3 on a submission is refused earlier, as an application already
// submitted (applicationTaken), in each of these cases.
func (jm *JobManager) isDuplicate(jobID string) bool {
	if jm.job(jobID) != nil || jm.resultStore[jobID] {
		return true
	}
	for _, p := range jm.pending {
		if p.req.jobID == jobID {
			return true
		}
	}
	return jm.haKey != "" && jm.storage.haHasResult(jm.haKey, jobID)
}

// ForgetHA drops what HA kept for a cluster id, as a JobManager finds nothing to recover when it
// starts while the cluster's HA ConfigMaps are gone (Fleet.writeHAConfigMap does so in a Fleet).
// scope is the Fleet's namespace, "" for JobManagers made with NewJobManager.
func (s *Storage) ForgetHA(scope, clusterID string) { s.haForget(scope + "/" + clusterID) }

// HAJobIDs are the jobs the HA store of a cluster id would recover: submitted, and without a result
// in the job result store, in submission order. scope is as for ForgetHA.
func (s *Storage) HAJobIDs(scope, clusterID string) []string {
	var out []string
	for _, hj := range s.haJobs(scope + "/" + clusterID) {
		out = append(out, hj.req.jobID)
	}
	return out
}
