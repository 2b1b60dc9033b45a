package flinksim

import (
	"net/http"
	"time"
)

// Real Flink's /jars/:jarid/run waits for the job's initialisation, so a restore the JobMaster
// cannot start is refused in the answer (400 "Could not execute application."), not accepted and
// failed later; the job is nonetheless listed FAILED under the id asked for, with the cause in its
// exception history, and that id stays taken. Found against real 1.20 and 2.3 (integ/realflink).

// restoreRefusal is why a submission's restore cannot start, or nil.
func (jm *JobManager) restoreRefusal(req submitRequest, allowNonRestored bool) *throwable {
	if req.savepointPath == "" {
		return nil
	}
	if _, ok := jm.storage.get(req.savepointPath); !ok {
		return restoreNotFound(req.savepointPath)
	}
	if jm.currentFaults().UnmappableRestores && !allowNonRestored {
		return restoreUnmappable(req.savepointPath)
	}
	return nil
}

func restoreUnmappable(path string) *throwable {
	ise := newThrowable(classIllegalState, "Failed to rollback to checkpoint/savepoint "+path+". Cannot map "+
		"checkpoint/savepoint state for operator 2c8f4b7f1d2e3a4b5c6d7e8f9a0b1c2d to the new program, because the operator "+
		"is not available in the new program. If you want to allow to skip this, you can set the --allowNonRestoredState "+
		"option on the CLI.", nil)
	rt := newThrowable(classRuntime, ise.String(), ise)
	ce := newThrowable(classCompletion, rt.String(), rt)
	return newThrowable(classJobInit, "Could not start the JobMaster.", ce)
}

// refuseRestore registers the job, failed at once, and answers as the run handler does.
func (jm *JobManager) refuseRestore(now time.Time, req submitRequest, cause *throwable) response {
	j := jm.submit(now, req, nil)
	j.initFailure = cause
	jm.recordException(j, now, exceptionEntry{failure: cause})
	jm.setState(j, stateFailed, now)
	name := jm.jobName(req)
	rt := newThrowable(classRuntime, cause.String(), cause)
	fe := newThrowable("org.apache.flink.util.FlinkException", "Failed to execute job '"+name+"'.", rt)
	pie := newThrowable("org.apache.flink.client.program.ProgramInvocationException",
		"The main method caused an error: Failed to execute job '"+name+"'.", fe)
	fre := newThrowable("org.apache.flink.util.FlinkRuntimeException", "Could not execute application.", pie)
	ce := newThrowable(classCompletion, fre.String(), fre)
	return restError(http.StatusBadRequest, classRestHandler, "Could not execute application.", ce)
}
