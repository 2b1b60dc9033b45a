package flinksim

import (
	"encoding/base64"
	"strings"
	"time"
)

// throwable models a Java exception with its cause chain, because Flink puts
// whole stringified stack traces into REST bodies and clients match substrings.
type throwable struct {
	class, message string
	cause          *throwable
}

func newThrowable(class, message string, cause *throwable) *throwable {
	return &throwable{class: class, message: message, cause: cause}
}

func (t *throwable) String() string {
	if t.message == "" {
		return t.class
	}
	return t.class + ": " + t.message
}

// stackTrace renders the exception like ExceptionUtils.stringifyException. The
// frames are synthetic; only the exception lines carry meaning.
func (t *throwable) stackTrace() string {
	var b strings.Builder
	for cur, first := t, true; cur != nil; cur, first = cur.cause, false {
		if !first {
			b.WriteString("Caused by: ")
		}
		b.WriteString(cur.String())
		b.WriteString("\n")
		simple := cur.class[strings.LastIndex(cur.class, ".")+1:]
		b.WriteString("\tat org.apache.flink.flinksim.Simulated" + simple + ".raise(Simulated" + simple + ".java:1)\n")
		b.WriteString("\tat java.base/java.lang.Thread.run(Thread.java:840)\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// serialized is the SerializedThrowable JSON of async operation results. The
// "serialized-throwable" field cannot be real Java serialisation here, so it
// carries the base64 of the stack trace; Java clients will fail to decode it
// and treat the operation as failed, which is the semantics that matters.
func (t *throwable) serialized() map[string]any {
	trace := t.stackTrace()
	return map[string]any{
		"class":                t.class,
		"stack-trace":          trace,
		"serialized-throwable": base64.StdEncoding.EncodeToString([]byte(trace)),
	}
}

// exceptionEntry is one entry of /jobs/:id/exceptions' exceptionHistory.
type exceptionEntry struct {
	failure  *throwable
	at       time.Time
	taskName string // empty for global failures
	tm       string
}

// recordException makes a failure the job's root exception (Flink's failure
// info) and adds it to the exception history, newest first.
func (jm *JobManager) recordException(j *job, at time.Time, e exceptionEntry) {
	e.at = at
	root := e
	j.rootCause = &root
	e.failure = historyFailure(e.failure)
	j.exceptions = append([]exceptionEntry{e}, j.exceptions...)
	if len(j.exceptions) > jm.cfg.exceptionHistory {
		j.exceptions = j.exceptions[:jm.cfg.exceptionHistory]
	}
}

const (
	classRestHandler     = "org.apache.flink.runtime.rest.handler.RestHandlerException"
	classNotFound        = "org.apache.flink.runtime.rest.NotFoundException"
	classJobNotFound     = "org.apache.flink.runtime.messages.FlinkJobNotFoundException"
	classCompletion      = "java.util.concurrent.CompletionException"
	classCheckpoint      = "org.apache.flink.runtime.checkpoint.CheckpointException"
	classJobException    = "org.apache.flink.runtime.JobException"
	classJobInit         = "org.apache.flink.runtime.client.JobInitializationException"
	classFileNotFound    = "java.io.FileNotFoundException"
	classRuntime         = "java.lang.RuntimeException"
	classIllegalState    = "java.lang.IllegalStateException"
	classHandlerRequest  = "org.apache.flink.runtime.rest.handler.HandlerRequestException"
	classDuplicateSubmit = "org.apache.flink.runtime.client.DuplicateJobSubmissionException"
	// classDuplicateApplication is 2.3's refusal of an application id already taken.
	classDuplicateApplication = "org.apache.flink.runtime.client.DuplicateApplicationSubmissionException"
	classApplicationNotFound  = "org.apache.flink.runtime.messages.FlinkApplicationNotFoundException"
)

func jobNotFound(jobID string) *throwable {
	return newThrowable(classJobNotFound, "Could not find Flink job ("+jobID+")", nil)
}

func unavailableWhileInitializing() *throwable {
	return newThrowable("org.apache.flink.runtime.dispatcher.UnavailableDispatcherOperationException",
		"Unable to get JobMasterGateway for initializing job. The requested operation is not available while the JobManager is initializing.", nil)
}

func checkpointDeclined(message string) *throwable {
	return newThrowable(classCheckpoint, message, nil)
}

func fileNotFound(path string) *throwable {
	return newThrowable(classFileNotFound, "Cannot find checkpoint or savepoint file/directory '"+path+
		"' on file system '"+pathScheme(path)+"'.", nil)
}

func restoreNotFound(path string) *throwable {
	fnf := fileNotFound(path)
	rt := newThrowable(classRuntime, fnf.String(), fnf)
	ce := newThrowable(classCompletion, rt.String(), rt)
	return newThrowable(classJobInit, "Could not start the JobMaster.", ce)
}

func injectedFailure(j *job) *throwable {
	return newThrowable(classRuntime, "Simulated failure injected by flinksim into job "+j.id+".", nil)
}

func taskManagerLost(tm string) *throwable {
	return newThrowable("org.apache.flink.runtime.jobmaster.JobMasterException",
		"TaskManager with id "+tm+" is no longer reachable.", nil)
}

func noResources(timeout time.Duration) *throwable {
	to := newThrowable("java.util.concurrent.TimeoutException",
		"Timeout has occurred: "+itoa(int(timeout.Milliseconds()))+" ms", nil)
	return newThrowable("org.apache.flink.runtime.jobmanager.scheduler.NoResourceAvailableException",
		"Slot request bulk is not fulfillable! Could not allocate the required slot within slot request timeout", to)
}

func recoverySuppressed(cause *throwable, restartEnabled bool) *throwable {
	strategy := "NoRestartBackoffTimeStrategy"
	if restartEnabled {
		strategy = "FixedDelayRestartBackoffTimeStrategy"
	}
	return newThrowable(classJobException, "Recovery is suppressed by "+strategy, cause)
}

// historyFailure is what the exception history shows for a failure: the task's
// own exception rather than the JobException wrapping it.
func historyFailure(t *throwable) *throwable {
	if t.class == classJobException && t.cause != nil {
		return t.cause
	}
	return t
}
