// Package flinksim simulates Flink JobManagers (1.20 unless told otherwise; 1.18 to 2.3, see
// Flink releases below) so flinkfsm's tests can exercise
// the operator against REST semantics that match a real cluster: asynchronous
// savepoints, cancellation that takes time, slot shortage, lost savepoints,
// JobManager crashes and restarts with or without HA, and flaky endpoints.
//
// A JobManager evaluates every time-based transition lazily from its clock when it
// is accessed; it never starts goroutines. With a fake clock a test therefore gets
// the same answers every run, and stepping the clock is all it takes to make time
// pass. Storage and Timeline catch their JobManagers up before answering, so
// reading them after a clock step sees what is due. The REST surface follows
// /work/shared/flink/REST.md (Flink 1.20) and each release's OpenAPI document.
//
// # Flink releases
//
// Options.FlinkVersion (in a Fleet, FLINK_VERSION in the jobmanager container's
// environment) picks the release whose REST API a JobManager speaks, where the
// calls an operator makes differ (versions.go; openapi_matrix_test.go checks
// each of 1.18 to 2.3 against its published document):
//
//   - Request bodies: before 1.20 a property the release lacks is refused with
//     400 "Request did not match expected format <class>."; from 1.20 on it is
//     ignored (FLINK-35302). Trigger ids and formatType came with 1.15,
//     restoreMode with 1.15, flinkConfiguration with 1.17, claimMode with 1.20;
//     2.0 removed programArgs and ?program-args, so a 2.x job sent them runs
//     without its arguments.
//   - Answers: /overview and /config report the release; GET /jobs/:id has
//     job-type and slotSharingGroupId from 1.20 and pending-operators from 2.0
//     (as /jobs/overview); exception history entries have endpoint from 1.19 and
//     no location from 2.0, which also drops root-exception, timestamp,
//     all-exceptions and truncated; /jobs/:id/config drops execution-mode in 2.0.
//   - 2.3 (applications.go, from its document and, for what a document cannot
//     say, its Dispatcher and handlers): every job belongs to an application.
//     /jars/:jarid/run answers applicationId beside jobid, the job's own id, and
//     refuses an id already taken as an application already submitted
//     (DuplicateApplicationSubmissionException) rather than a job; GET /jobs/:id
//     adds application-id and schedulerType, /jobs/overview jobType and
//     schedulerType, /taskmanagers assignedTasks, and execution-result the job's
//     name, application-id, start-time and end-time. New: /applications/overview,
//     /applications/:id (500 FlinkApplicationNotFoundException when unknown),
//     its cancel, exceptions and jobmanager/config, /jars/:jarid/run-application
//     (a PackagedProgramApplication, which follows its job unless
//     execution.terminate-application-on-any-job-terminated-exceptionally is
//     false), and /jobs/:id/rescales/{config,overview,history,summary,details}
//     (the history only with web.adaptive-scheduler.rescale-history.size > 0,
//     and only of in-place rescales). With HA a JobManager that takes over
//     recovers each job under its own id in an application of that id, and
//     re-runs unfinished run-application applications; Faults.RerunUnderNewJobID
//     and Faults.RerunTakes stage the other ways Flink could go.
//   - Unchanged from 1.18 to 2.3: savepoint, stop and checkpoint triggers (with
//     trigger ids), their status, cancel, checkpoint statistics, jars, task
//     managers, resource requirements and the job states.
//
// A Fleet watches pods on a Kubernetes API and runs one JobManager per Flink
// cluster (identified by the flink-app, flink-app-hash and flink-deployment-type
// labels), so integration tests can point the operator at one HTTP address.
//
// # Served endpoints (each at /x and /v1/x)
//
// GET /config, /overview, /taskmanagers, /jobmanager/config, /jars, /jobs,
// /jobs/overview, /jobs/:id, /jobs/:id/{status,config,plan,exceptions,
// execution-result,metrics,checkpoints,checkpoints/config,
// checkpoints/details/:cid,checkpoints/:tid,savepoints/:tid,resource-requirements,
// vertices/:vid/subtasks/metrics}, /savepoint-disposal/:tid; POST /jars/upload, /jars/:jarid/run,
// /jobs/:id/{savepoints,stop,checkpoints}, /savepoint-disposal; PATCH /jobs/:id;
// PUT /jobs/:id/resource-requirements; DELETE /jars/:jarid. From 2.3 also GET
// /applications/overview, /applications/:aid{,/exceptions,/jobmanager/config},
// /jobs/:id/rescales/{config,overview,history,summary,details/:uuid}; POST
// /applications/:aid/cancel, /jars/:jarid/run-application. Any other GET is the
// web UI's 404 "Unable to load requested file <path>.", any other request the
// router's 404 "Not found: <uri>".
//
// # Load
//
// JobManager.SetLoad (Fleet.SetLoad per application) gives the jobs submitted from then on the
// vertices of a Load (load.go), and records arriving at their source's topic at a Rate over time:
// constant, steps, ramps and waves, added up (load_rates.go). JobManager.SetInput (Fleet.SetInput)
// changes that Rate from a moment a test chooses, the topic and the jobs reading it kept, as a load
// step in production does. The topic is integrated exactly from
// the clock (load_flow.go): the source reads what arrives, or as fast as the vertex with the least
// room for its share allows while a backlog waits, only while the job runs with its tasks deployed,
// so restarts, rescales and resubmissions cost what arrives meanwhile; the backlog outlives jobs
// and JobManager processes. GET /jobs/:id/vertices/:vid/subtasks/metrics (load_metrics.go) reports
// each subtask's busy, backpressured and idle time, records in and out (per second and counted),
// and for the source pendingRecords and Kafka partition offsets, as Flink's metric store names
// them, with seeded noise. Left out: the 60s windows of Flink's per-second meters and the metric
// fetcher's 10s refresh (values are those of the moment), records processed twice after a restore
// from a checkpoint, per-partition backlogs (the partitions are read at one pace), and a topic
// shared between two clusters of an application (each cluster has its own).
//
// # Modelled beyond the basics
//
//   - Slots: a job holds parallelism slots (slot sharing) from deployment until it
//     is globally terminal; RUNNING jobs wait with SCHEDULED tasks, and fail (or
//     restart, when checkpointing or a restart strategy is configured) after
//     slot.request.timeout. Losing TaskManagers fails the newest jobs over.
//   - Restarts restore the latest completed checkpoint (counts.restored++).
//   - The adaptive scheduler (jobmanager.scheduler: adaptive) keeps a job
//     CREATED until it has slots for every vertex's upper bound, or for the
//     lower bounds for resource-stabilization-timeout, and fails it after
//     resource-wait-timeout without them. PUT /jobs/:id/resource-requirements
//     and new slots rescale a running job in place, no sooner than
//     scaling-interval.min after it started running: same job id, RESTARTING
//     → CREATED → RUNNING from the latest checkpoint, each vertex at
//     min(upper bound, slots). A lower bound the slots cannot meet leaves the
//     job running as it is. With the DefaultScheduler both resource-requirements
//     calls answer 500 UnsupportedOperationException, as in Flink.
//   - Checkpoint retention: state.checkpoints.num-retained (default 1) and
//     execution.checkpointing.externalized-checkpoint-retention (default
//     NO_EXTERNALIZED_CHECKPOINTS) decide which chk-<n> directories stay in Storage.
//     A job HA recovers holds the checkpoints it had retained, as Flink's
//     recovered checkpoint store does: newer ones subsume them, and the policy
//     discards them as the job ends.
//   - A job id stays a duplicate for the life of the JobManager process
//     (non-HA job result store), even after the job left the job store
//     (jobstore.expiration-time, default 1h).
//   - Timings.JobCacheTTL reproduces the web.refresh-interval staleness of
//     job-level GETs; it is off by default. The checkpoint statistics, /checkpoints
//     and each checkpoint's details alike, come from one copy of the job's taken
//     at most that long ago, as Flink's do.
//   - JobManager processes: Crash restarts one at once; Restart (an OOMKill)
//     makes it answer every call with the leader-election 503 for
//     Timings.Recovery first. Without HA both lose every job, operation and
//     jar, and the Timeline marks the jobs lost.
//   - Flink HA (high-availability[.type] other than NONE): per cluster id
//     (kubernetes.cluster-id, else high-availability.cluster-id, else the
//     JobManager's name; in a Fleet, else the service) Storage keeps each
//     submitted job's request and latest completed checkpoint, and the job
//     result store. A JobManager that starts or restarts recovers every job
//     without a result under its own id, INITIALIZING → CREATED → RUNNING from
//     that checkpoint (or its submitted savepoint), counts.restored 1 and
//     checkpoint ids continuing. In the Timeline the job is SUSPENDED while no
//     JobManager runs it and then continues as the same record. A job id with
//     a result in the HA job result store stays a duplicate for good. In a
//     Fleet, a JobManager with HA writes "<cluster id>-cluster-config-map"
//     (labels app=<cluster id> and type=flink-native-kubernetes, and on 1.x
//     configmap-type=high-availability, as real Flink labels them) to the
//     Kubernetes API, and one that starts while it is missing finds no HA
//     data: deleting a cluster's HA ConfigMaps loses what HA would recover.
//     Flink's per-job "<cluster id>-<job id>-config-map" is not modelled.
//   - Faults.SubmitRegistersAfter loses the answer to an accepted submission
//     and registers the job only later; its id is a duplicate meanwhile.
//     Faults.Hang leaves requests unanswered until the client gives up.
//   - Options.FlinkVersion below 1.15 has no triggerId in savepoint and stop
//     requests and refuses one: each trigger starts a new savepoint under a
//     fresh id.
//   - Faults.Hostile answers like a hostile tenant's JobManager: an answer
//     padded to a size, a huge array or arrays nested as deep as a size
//     allows in the endpoint's own list (ShapeHuge, ShapeNested), or any of
//     them sent a few bytes a second (BytesPerSecond), to every answer or
//     to successful ones only. The soak of `make bench` runs them beside
//     ordinary applications.
//   - POST /jars/upload streams the jar past, as Flink streams it to its
//     upload directory: a jar of hundreds of MiB uploads whole.
//
// # Known simplifications
//
//   - "serialized-throwable" in failure-cause is base64 of the stack trace, not
//     Java serialisation; Java clients see a failure but not its message.
//   - Jobs have two vertices unless a Load gives them others, and job-type STREAMING; there is no
//     application mode, reactive mode, and no RECONCILING or SUSPENDED in REST
//     answers (only the Timeline shows SUSPENDED, for HA jobs between processes).
//   - The adaptive scheduler does not model scaling-interval.max, and frees a
//     job's slots while it restarts, where Flink keeps them reserved.
//   - Initialising and init-failed jobs answer 404 "Checkpointing has not been
//     enabled." on /checkpoints (unverified against real Flink).
//   - HA has no leader election between live JobManagers: two sharing a
//     cluster id both recover its jobs. job-result-store.delete-on-commit is
//     not modelled (Flink's default deletes a clean entry, allowing reuse of
//     the job id). Submissions not yet registered are lost in a crash.
package flinksim
