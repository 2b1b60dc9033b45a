// Package client talks to a Flink JobManager over its REST API (Flink 1.17–1.20, 2.x).
//
// It calls the paths without the /v1 prefix (Flink serves both) under a base URL that may
// itself carry a path prefix, such as a kubectl proxy URL
// "http://127.0.0.1:9000/ns/app-abc123". Every call gets its own timeout from Config on top
// of the caller's context.
//
// # No retries here
//
// The client never retries. The operator's state machine owns retries, counts them and
// persists them in the resource status, so a retry loop in here would hide attempts from it
// and stretch reconcile loops. Instead every failure is an *Error that says whether a retry is
// safe and useful (IsRetryable), and the outcomes the state machine branches on have their
// own predicates (IsNotFound, IsConflict, IsUnsupported).
//
// # Retry classification
//
// "yes" means IsRetryable reports true.
//
//	call                  transport/timeout   404   408   409   503   other 4xx/3xx   other 5xx
//	GET (all reads)       yes                 yes*  yes   no    yes   no              yes****
//	CancelJob (PATCH)     yes                 no    yes   no    yes   no              yes
//	TriggerSavepoint      yes                 no    yes   no    yes   no              yes
//	UpdateJobResource-    yes                 no    yes   yes   yes   no              yes****
//	Requirements (PUT)
//	SubmitJob             no** (yes if the    no    no    no    yes   no              yes***
//	                      request was never
//	                      written)
//	UploadJar (POST)      yes                 no    yes   no    yes   no              yes
//	DeleteJar             yes                 no    yes   no    yes   no              yes
//
// Why:
//   - Reads have no side effects. 404 and 503 are what a starting JobManager answers (503 is
//     Flink's leader-election reply, and a proxy in front of a pod that is not serving yet
//     answers 404), so both are worth another look later; the Lyft operator tolerates both on
//     its readiness probe for the same reason. IsNotFound still tells the caller a job is
//     missing.
//     (*) Exception: polling an unknown savepoint trigger id ("There is no savepoint operation
//     with triggerId=...") is not retryable. Flink forgets results 5 minutes after completion
//     and forgets everything on restart, so polling again can never succeed; the caller has to
//     trigger again.
//   - Cancel is idempotent on Flink's side (cancelling a CANCELED job answers 202), so lost
//     responses and 408 "Job cancellation timed out." can be retried. 404 (job unknown) and
//     409 (job already FINISHED or FAILED) are final answers, not failures to retry.
//   - A savepoint trigger is accepted even for unknown jobs, so errors are rare and mostly
//     transport. A retry without SavepointRequest.TriggerID may start a second savepoint;
//     set TriggerID to make retries idempotent. 400 (no target directory configured) is final.
//   - SubmitJob runs the program's main() inside the request. (**) Once the request has been
//     written, a timeout or broken connection leaves the outcome unknown: Flink may already be
//     running the job, and a blind retry could submit it twice. The caller must reconcile by
//     listing jobs. Dial and DNS failures happen before anything is written and are retryable.
//     (***) A 5xx whose body names ProgramInvocationException or JobSubmissionException, or says
//     the jar "does not exist", is a deterministic failure and not retryable. 502 and 504 are
//     not retryable either: Flink never sends them, so they come from a proxy that may have
//     forwarded the request. A 400 ("Could not execute application.", including a duplicate
//     job id) is final.
//   - Resource requirements are read and set only by the adaptive scheduler. (****) With any
//     other scheduler Flink answers 500 with an UnsupportedOperationException, which
//     IsUnsupported recognises and which is not retryable: the scheduler does not change
//     while the cluster lives. Setting the same requirements twice is a no-op in Flink, so the
//     PUT is retried like cancel; its 409 means another update is still being applied, so
//     unlike cancel's it is retryable. A 400 lists what is wrong with the requirements (a
//     missing or unknown vertex, bounds below 1, above the maximum parallelism, or crossed).
//   - Every jar upload is a new file ("<uuid>_<name>.jar"), so a retried upload whose first
//     answer was lost only leaves an unused jar behind, which the caller can find in /jars and
//     delete. A 400 ("Only Jar files are allowed.") is final. Deleting a jar Flink does not have
//     is a 400 naming the file ("does not exist in"), which IsJarNotFound recognises: a retried
//     delete that had happened meets it, and can take it as done.
//   - A 2xx body that cannot be decoded, and invalid arguments (empty ids, bad base URL), are
//     not retryable: the same request would fail the same way.
//   - A 2xx answer refused for its size or shape (see "What one answer may cost") is not
//     retryable either, and keeps its status: it is an answer, so it satisfies neither IsNoAnswer
//     nor IsNotFound, and the operator's liveness judgement stays Unknown. An answer that waited
//     for room in the budget past the call's timeout is a timeout, retryable as one.
//
// # What one answer may cost
//
// A JobManager runs the tenant's image, so its answers may be built to exhaust the operator's
// memory. Every answer is bounded three ways (answers.go): a byte cap per call fitted to what
// Flink really answers it (error answers are cut at 256 KiB, never refused); before decoding, a
// walk that refuses an answer with too many array elements and object members, more than one
// per 8 bytes, or nesting deeper than 32; and one budget for the whole process of what answers
// being read and decoded may cost at once (32 MiB), which makes calls wait for each other
// instead of adding up.
//
// # Metrics
//
// New registers with the given registerer a latency histogram, a request counter and an error
// counter labelled by operation (the API method name) and, for errors, the reason. Two clients
// with one registerer do not panic: the second shares the first one's series. Tests that assert
// on counts pass a registry of their own.
package client
