package flinkapplication

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// The explorer's world: the unit world (world_test.go) with several objects of every kind at once,
// every REST call of the operator seen on its way to a JobManager (disposals are checked as they
// are asked for), and an operator that can be killed at any of its Kubernetes writes. Everything
// random is drawn from one math/rand/v2 source seeded by the run's seed, and time is the world's
// fake clock, so a seed replays the same run.

// explorer is one seeded run.
type explorer struct {
	t     *testing.T
	w     *world
	seed  uint64
	rng   *rand.Rand
	trace []string
	// steps counts user actions, fault injections and reconcile passes.
	steps int
	// counts of each sort of step, for the summary.
	actions, faults, passes int

	jarURL string
	// current is the live object of each name, nil once it is gone; identities is every object
	// ever created, in creation order, the gone ones included.
	current    map[string]*identity
	identities []*identity
	uids       int
	nonces     int
	snapshots  int

	history *stateHistory
	// violations found by the checks, in the order found; the run stops at the first step that has any.
	violations []string

	// refusals are the jobs whose checkpoints Flink failed to tell in the pass that runs.
	refusals checkpointRefusals
	// operatorActive is set while a pass runs: only then do writes count as the operator's.
	operatorActive bool
	// crashIn, when positive, kills the operator at the crashIn-th write of the operator from now.
	crashIn int
	// killed is set from the write the operator was killed at until its pass returns: a dead
	// process writes nothing more and calls no JobManager.
	killed bool
	// statusWritten is set once the pass that runs wrote its object's own status: a pass killed
	// before it persisted nothing it learnt, its checkpoint records included. A FlinkSnapshot's
	// status written before (explorer seed 12000329) holds none of them.
	statusWritten bool
	// slowAnswers makes JobManagers answer this slowly (simulated), while set.
	slowAnswers time.Duration
	// restarts are when the operator process was restarted or came back from being down.
	restarts []time.Time
	// passRESTCalls and passTime are the worst seen in one pass, for the report.
	passRESTCalls int64
	passTime      time.Duration
	// lastPass says which object the last pass was of, what it asked of Flink and how long it
	// took, for the fingerprint.
	lastPass string
	// passCalls are the requests (method and path) of the pass that runs, for the fingerprint.
	passCalls   map[string]bool
	passCallsMu sync.Mutex
	// ha is set when the run's applications and session cluster may run with Flink's Kubernetes HA
	// (explorer_ha_test.go); passing is the object whose pass runs, nil for an orphaned snapshot's.
	ha      bool
	passing *identity
}

// identity is one object: a kind, a name and a uid. An object deleted and created again under the
// same name is another identity.
type identity struct {
	kind, name string
	uid        types.UID
	flavour    flavour
	createdAt  time.Time
	// deleteMode is the mode it was deleted with, once deletion was asked for.
	deleteMode v1beta1.DeleteMode
	deleting   bool
	gone       bool
	goneAt     time.Time
	// explicit are the states the user named for a restore of this object (spec.savepointPath,
	// a session job's initialSavepointPath, by restoreSnapshot), normalized; explicitSnapshots the
	// FlinkSnapshots named.
	explicit          map[string]bool
	explicitSnapshots map[string]bool
	// lastWarning is when a Warning Event was last emitted for the object.
	lastWarning time.Time
	// passes are when each pass of the object began, oldest first.
	passes []time.Time
	// refused are the passes in which Flink failed to tell a job's checkpoints.
	refused []refusedCheckpointsPass
	// unwritten are the passes, by when they began, in which the operator was killed before it
	// wrote the object's status: whatever they recorded died with the process.
	unwritten []time.Time
	// mostPods is the most pods one of its clusters asked for in the visit of ClusterStarting that
	// began at podsSince (explorer.mostPods).
	mostPods  int
	podsSince time.Time
}

// passedBetween tells whether a pass of the object began in [from, to): one that could look at its
// job then.
func (id *identity) passedBetween(from, to time.Time) bool {
	for _, p := range id.passes {
		if !p.Before(from) && p.Before(to) {
			return true
		}
	}
	return false
}

func (id *identity) String() string {
	return fmt.Sprintf("%s %s (uid %s)", id.kind, id.name, id.uid)
}

// owner is the jobs.Owner whose job ids carry this identity's prefix.
func (id *identity) owner() jobs.Owner {
	return jobstate.OwnerOf(id.kind, &metav1.ObjectMeta{Namespace: ns, Name: id.name, UID: id.uid})
}

// timelineKey is where the simulator records the identity's jobs: its application's clusters, or
// its session cluster's.
func (id *identity) timelineKey() string {
	if id.kind == sessionJobKindName {
		return ns + "/" + sessionClusterName
	}
	return ns + "/" + id.name
}

// flavour is one of the objects the explorer keeps alive.
type flavour struct {
	name string
	kind string
	// blueGreen objects may run two jobs at once: the deployed version's and the new one's.
	blueGreen bool
}

const sessionClusterName = "sess"

// The objects of a run: four applications (a Dual one keeping two savepoints and disposing of the
// rest, a Single LastState one rescaled in place, a BlueGreen one promoted automatically, one with
// the autoscaler in Apply mode), a session cluster and two session jobs on it.
var flavours = []flavour{
	{name: "alpha", kind: applicationKindName},
	{name: "beta", kind: applicationKindName},
	{name: "gamma", kind: applicationKindName, blueGreen: true},
	{name: "delta", kind: applicationKindName},
	{name: sessionClusterName, kind: sessionClusterKindName},
	{name: "sj1", kind: sessionJobKindName},
	{name: "sj2", kind: sessionJobKindName},
}

// newExplorer starts the run of a seed, with Flink HA as the seed (or -explorer.ha) says (haWorld).
func newExplorer(t *testing.T, seed uint64) *explorer {
	return newExplorerHA(t, seed, haWorld(seed))
}

func newExplorerHA(t *testing.T, seed uint64, ha bool) *explorer {
	// Ids from the seed: paths, orders and which request a fault hits depend on them.
	var idSeed [32]byte
	binary.LittleEndian.PutUint64(idSeed[:], seed)
	t.Cleanup(jobs.UseIDSource(rand.NewChaCha8(idSeed)))
	idSeed[8] = 1
	t.Cleanup(flinksim.UseIDSource(rand.NewChaCha8(idSeed)))
	w := newWorld(t)
	x := &explorer{t: t, w: w, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		current: map[string]*identity{}, passCalls: map[string]bool{}, history: newStateHistory(), ha: ha}
	x.jarURL = w.withSessions()
	w.loads["delta"] = bottleneck()
	// One image whose jobs fail soon after they run: an update to it rolls back.
	w.imageFaults["flink-wordcount:3"] = flinksim.Faults{FailJobsAfter: 20 * time.Second}
	w.answerTime = func(*http.Request) time.Duration { return x.slowAnswers }
	// Each request steps the one clock by its answer time: reads in flight together would see it
	// stepped by the others in whatever order they arrived, and a seed would not replay.
	w.env.ReadsInOrder = true
	x.proxyJobManagers()
	// Before the operator is made killable: a write it is killed at never reaches this check.
	x.watchHAConfigMapDeletes()
	x.killableOperator()
	for _, f := range flavours {
		x.createObject(f, "")
	}
	return x
}

// note appends a line to the trace, stamped with the step and the simulated time.
func (x *explorer) note(format string, args ...any) {
	x.trace = append(x.trace, fmt.Sprintf("%6d %s  %s", x.steps, x.w.clock.Now().Format("15:04:05.0"), fmt.Sprintf(format, args...)))
}

// proxyJobManagers puts the explorer between the operator and the JobManagers: a disposal is checked
// against what the namespace references before it reaches Flink, and a killed operator calls nobody.
func (x *explorer) proxyJobManagers() {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if x.killed {
			http.Error(rw, "the operator process is dead", http.StatusBadGateway)
			return
		}
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/savepoint-disposal") {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var req map[string]any
			if json.Unmarshal(body, &req) == nil {
				for _, v := range req {
					if p, ok := v.(string); ok && p != "" {
						x.checkDisposal(p)
					}
				}
			}
		}
		if x.operatorActive {
			x.passCallsMu.Lock()
			x.passCalls[r.Method+" "+r.URL.Path] = true
			x.passCallsMu.Unlock()
		}
		if !x.operatorActive {
			x.w.route(rw, r)
			return
		}
		a := &answerRecorder{ResponseWriter: rw}
		x.w.route(a, r)
		x.refusals.note(r, a.status)
	}))
	// A connection per request: a request to an unreachable JobManager (the connection closed
	// unanswered) is then never retried by net/http on a fresh connection, which it does only for a
	// reused one, and how many connections were idle is the scheduler's choice, not the seed's.
	srv.Config.SetKeepAlivesEnabled(false)
	srv.Start()
	x.t.Cleanup(srv.Close)
	x.w.env.FlinkURL = func(namespace, service string, _ int32) string {
		return srv.URL + "/" + namespace + "/" + service
	}
}

// killableOperator makes any write of the operator, to either clientset, the one it is killed at
// when a crash is armed: that write is lost, and so is every later one of the same pass; the next
// pass is a new process's (restartOperator).
func (x *explorer) killableOperator() {
	react := func(a k8stesting.Action) (bool, runtime.Object, error) {
		switch a.GetVerb() {
		case "create", "update", "patch", "delete", "deletecollection":
		default:
			return false, nil, nil
		}
		if !x.operatorActive {
			return false, nil, nil
		}
		if x.killed {
			return true, nil, errors.New("the operator process is dead")
		}
		if x.crashIn > 0 {
			x.crashIn--
			if x.crashIn == 0 {
				x.killed = true
				x.note("operator killed at its write: %s %s %s", a.GetVerb(), a.GetResource().Resource, a.GetSubresource())
				return true, nil, errors.New("operator killed before the write")
			}
		}
		if a.GetSubresource() == "status" && x.ownStatus(a) {
			x.statusWritten = true
		}
		return false, nil, nil
	}
	x.w.apps.PrependReactor("*", "*", react)
	x.w.kube.PrependReactor("*", "*", react)
}

// createObject creates the flavour's object anew under a new uid; restoreFrom, when set, is the
// savepoint its first job starts from (spec.savepointPath, initialSavepointPath).
func (x *explorer) createObject(f flavour, restoreFrom string) *identity {
	x.uids++
	id := &identity{kind: f.kind, name: f.name, uid: types.UID(fmt.Sprintf("%s-uid-%d", f.name, x.uids)), flavour: f,
		createdAt: x.w.clock.Now(), explicit: map[string]bool{}, explicitSnapshots: map[string]bool{}}
	if restoreFrom != "" {
		id.explicit[normalPath(restoreFrom)] = true
	}
	switch f.kind {
	case applicationKindName:
		app := x.application(f.name)
		app.UID = id.uid
		app.Spec.SavepointPath = restoreFrom
		if x.ha && x.rng.IntN(2) == 0 {
			withKubernetesHA(&app.Spec)
		}
		if x.ha && f.name == "alpha" && x.rng.IntN(2) == 0 {
			app.Spec.FlinkVersion = "2.3"
		}
		if x.variesRetention() {
			// Half the applications start with a policy of their own (explorer_retention_test.go).
			if i := x.rng.IntN(2 * len(retentionPolicies)); i < len(retentionPolicies) {
				app.Spec.FlinkConfig[flink.CheckpointRetentionKey] = retentionPolicies[i]
			}
		}
		x.w.create(app)
	case sessionClusterKindName:
		c := sessionCluster(f.name)
		c.UID = id.uid
		if x.ha && x.rng.IntN(2) == 0 {
			setKubernetesHA(c.Spec.FlinkConfig, true)
		}
		if x.ha && x.rng.IntN(2) == 0 {
			c.Spec.FlinkVersion = "2.3"
		}
		x.w.createSessionCluster(c)
	case sessionJobKindName:
		mode := v1beta1.UpgradeModeSavepoint
		if f.name == "sj2" {
			mode = v1beta1.UpgradeModeLastState
		}
		j := sessionJob(f.name, sessionClusterName, x.jarURL, mode)
		j.UID = id.uid
		j.Spec.Job.InitialSavepointPath = restoreFrom
		x.w.createSessionJob(j)
	}
	x.current[f.name] = id
	x.identities = append(x.identities, id)
	return id
}

// application is the spec of the flavour's application.
func (x *explorer) application(name string) *v1beta1.FlinkApplication {
	var app *v1beta1.FlinkApplication
	switch name {
	case "alpha":
		app = wordcount(name)
		app.Spec.SavepointRetention = &v1beta1.SavepointRetention{Keep: 2, DisposeOlder: true}
	case "beta":
		app = wordcount(name)
		app.Spec.DeploymentMode = v1beta1.DeploymentModeSingle
		app.Spec.UpgradeMode = v1beta1.UpgradeModeLastState
		app.Spec.ScaleMode = v1beta1.ScaleModeInPlace
		app.Spec.FlinkConfig["state.checkpoints.num-retained"] = "3"
	case "gamma":
		app = wordcount(name)
		blueGreenSpec(&app.Spec)
		promote, delay := int32(30), int32(0)
		app.Spec.BlueGreen = &v1beta1.BlueGreenSpec{Promotion: v1beta1.PromotionAuto, PromoteAfterSeconds: &promote,
			TeardownDelaySeconds: &delay}
	case "delta":
		app = autoscaledApp(v1beta1.AutoscalerApply)
		app.Name = name
	}
	return app
}

// live lists the objects that exist now, in a fixed order.
func (x *explorer) live() []*identity {
	var out []*identity
	for _, f := range flavours {
		if id := x.current[f.name]; id != nil {
			out = append(out, id)
		}
	}
	return out
}

// liveOf lists the live objects of one kind.
func (x *explorer) liveOf(kind string) []*identity {
	var out []*identity
	for _, id := range x.live() {
		if id.kind == kind {
			out = append(out, id)
		}
	}
	return out
}

// pick draws one of the items, or nil when there are none.
func pickOne[T any](x *explorer, items []T) (T, bool) {
	var zero T
	if len(items) == 0 {
		return zero, false
	}
	return items[x.rng.IntN(len(items))], true
}

// pass runs one reconcile pass of one object (or of a deleted FlinkSnapshot whose owner is gone),
// as the operator's workqueue would, then lets some simulated time pass.
func (x *explorer) pass() {
	x.steps++
	x.passes++
	w := x.w
	w.settle()
	targets := x.live()
	orphans := x.orphanedSnapshots()
	n := len(targets) + len(orphans)
	if n == 0 {
		w.clock.Step(maxStep)
		return
	}
	i := x.rng.IntN(n)
	ctx := context.Background()
	calls, start := w.restCalls.Load(), w.clock.Now()
	x.operatorActive, x.statusWritten = true, false
	var err error
	what := ""
	if i < len(targets) {
		id := targets[i]
		what = id.name
		x.passing = id
		defer func() { x.passing = nil }()
		id.passes = append(id.passes, start)
		x.refusals.start()
		defer func() {
			if jobs := x.refusals.taken(); jobs != nil {
				id.refused = append(id.refused, refusedCheckpointsPass{at: start, jobs: jobs})
			}
		}()
		switch id.kind {
		case applicationKindName:
			_, err = w.env.Reconcile(ctx, ns, id.name)
		case sessionClusterKindName:
			_, err = w.reconcileSessionCluster(ctx, ns, id.name)
		case sessionJobKindName:
			_, err = w.reconcileSessionJob(ctx, ns, id.name)
		}
		// A jar transfer the pass started ends within it, not at a moment the scheduler picks.
		w.sessionJobs().Settle()
		x.attributeEvents(id)
	} else {
		what = "snapshot " + orphans[i-len(targets)]
		_, err = w.env.ReconcileOrphanedSnapshot(ctx, ns, orphans[i-len(targets)])
		w.events()
	}
	x.operatorActive = false
	x.passCallsMu.Lock()
	x.lastPass = fmt.Sprintf("%s took=%s %v", what, w.clock.Now().Sub(start), x.passCalls)
	x.passCalls = map[string]bool{}
	x.passCallsMu.Unlock()
	if x.killed && !x.statusWritten && i < len(targets) {
		targets[i].unwritten = append(targets[i].unwritten, start)
	}
	if x.killed {
		x.killed = false
		w.restartOperator()
		x.restarts = append(x.restarts, w.clock.Now())
		x.note("pass of %s: the operator was killed; a new process takes over", what)
	} else if err != nil && !strings.Contains(err.Error(), "operator killed") {
		x.note("pass of %s: %v", what, err)
	}
	x.checkPassBounds(what, w.restCalls.Load()-calls, w.clock.Now().Sub(start))
	x.collectGone()
	w.clock.Step(time.Duration(100+x.rng.IntN(900)) * time.Millisecond)
}

// orphanedSnapshots are the deleted FlinkSnapshots held by their finalizer whose owner is gone.
func (x *explorer) orphanedSnapshots() []string {
	var out []string
	for _, s := range x.w.snapshots() {
		if s.DeletionTimestamp != nil && len(s.Finalizers) > 0 && x.current[s.Spec.Owner.Name] == nil {
			out = append(out, s.Name)
		}
	}
	return out
}

// attributeEvents drains the Events of the pass just run: all of them are that object's.
func (x *explorer) attributeEvents(id *identity) {
	for _, e := range x.w.events() {
		if strings.HasPrefix(e, "Warning ") {
			id.lastWarning = x.w.clock.Now()
		}
		if strings.Contains(e, "InvalidTransition") {
			x.violate("%s: the state machine refused a transition: %s", id, e)
		}
	}
}

// collectGone does what the API server and the garbage collector do once an object's last
// finalizer is gone: the object goes, and with it what it owns.
func (x *explorer) collectGone() {
	ctx := context.Background()
	w := x.w
	for _, id := range x.live() {
		var meta *metav1.ObjectMeta
		var err error
		switch id.kind {
		case applicationKindName:
			var a *v1beta1.FlinkApplication
			if a, err = w.apps.FlinkV1beta1().FlinkApplications(ns).Get(ctx, id.name, metav1.GetOptions{}); err == nil {
				meta = &a.ObjectMeta
			}
		case sessionClusterKindName:
			var c *v1beta1.FlinkSessionCluster
			if c, err = w.apps.FlinkV1beta1().FlinkSessionClusters(ns).Get(ctx, id.name, metav1.GetOptions{}); err == nil {
				meta = &c.ObjectMeta
			}
		case sessionJobKindName:
			var j *v1beta1.FlinkSessionJob
			if j, err = w.apps.FlinkV1beta1().FlinkSessionJobs(ns).Get(ctx, id.name, metav1.GetOptions{}); err == nil {
				meta = &j.ObjectMeta
			}
		}
		if err != nil && !apierrors.IsNotFound(err) {
			x.t.Fatalf("reading %s: %v", id, err)
		}
		if meta != nil && (meta.DeletionTimestamp == nil || len(meta.Finalizers) > 0) {
			continue
		}
		if meta != nil {
			var derr error
			switch id.kind {
			case applicationKindName:
				derr = w.apps.FlinkV1beta1().FlinkApplications(ns).Delete(ctx, id.name, metav1.DeleteOptions{})
			case sessionClusterKindName:
				derr = w.apps.FlinkV1beta1().FlinkSessionClusters(ns).Delete(ctx, id.name, metav1.DeleteOptions{})
			case sessionJobKindName:
				derr = w.apps.FlinkV1beta1().FlinkSessionJobs(ns).Delete(ctx, id.name, metav1.DeleteOptions{})
			}
			if derr != nil {
				x.t.Fatalf("deleting %s: %v", id, derr)
			}
		}
		w.collectOwnedBy(id.uid)
		id.gone, id.goneAt = true, w.clock.Now()
		x.current[id.name] = nil
		x.note("%s is gone", id)
	}
}

// violate records an invariant violation.
func (x *explorer) violate(format string, args ...any) {
	v := fmt.Sprintf(format, args...)
	for _, old := range x.violations {
		if old == v {
			return
		}
	}
	x.violations = append(x.violations, v)
	x.note("VIOLATION: %s", v)
}

// jobsOf are the simulator's records of the identity's jobs, oldest first.
func (x *explorer) jobsOf(id *identity) []flinksim.JobRecord {
	owner := id.owner()
	var out []flinksim.JobRecord
	records := x.w.timeline.Jobs(id.timelineKey())
	for _, r := range records {
		if owner.Started(firstJobID(records, r)) {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].AliveFrom().Before(out[j].AliveFrom()) })
	return out
}

// identityOfJob is the object that started the job, nil when none of the explorer's did.
func (x *explorer) identityOfJob(jobID string) *identity {
	jobID = x.firstIDOf(jobID)
	for _, id := range x.identities {
		if id.kind != sessionClusterKindName && id.owner().Started(jobID) {
			return id
		}
	}
	return nil
}

// nonce is a fresh nonce.
func (x *explorer) nonce() string {
	x.nonces++
	return fmt.Sprintf("n%d", x.nonces)
}

// ownStatus tells whether the status write is of the object whose pass runs, as against another
// object's (a FlinkSnapshot's) that the pass writes first. A pass of no object counts any.
func (x *explorer) ownStatus(a k8stesting.Action) bool {
	id := x.passing
	if id == nil {
		return true
	}
	resource := map[string]string{applicationKindName: "flinkapplications", sessionJobKindName: "flinksessionjobs",
		sessionClusterKindName: "flinksessionclusters"}[id.kind]
	if a.GetResource().Resource != resource {
		return false
	}
	switch w := a.(type) {
	case k8stesting.PatchAction:
		return w.GetName() == id.name
	case k8stesting.UpdateAction:
		if o, ok := w.GetObject().(metav1.Object); ok {
			return o.GetName() == id.name
		}
	}
	return true
}
