package flinksim

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

func errInvalidEnum(field, value string) error {
	return fmt.Errorf("cannot deserialize value %q for field %q", value, field)
}

// parseTriggerID validates an optional client-supplied trigger id.
func parseTriggerID(v *string, class string) (string, *response) {
	if v == nil || *v == "" {
		return "", nil
	}
	if !hex32.MatchString(*v) {
		resp := badRequestFormat(class, fmt.Errorf("cannot parse trigger id %q", *v))
		return "", &resp
	}
	return strings.ToLower(*v), nil
}

func parseFormat(v *string, class string) (string, *response) {
	if v == nil {
		return "CANONICAL", nil
	}
	switch *v {
	case "CANONICAL", "NATIVE":
		return *v, nil
	}
	resp := badRequestFormat(class, errInvalidEnum("formatType", *v))
	return "", &resp
}

func (jm *JobManager) handleCancel(rc *reqCtx) response {
	mode := rc.r.URL.Query().Get("mode")
	switch strings.ToUpper(mode) {
	case "", "CANCEL":
	case "STOP":
		return restError(http.StatusPermanentRedirect, classRestHandler, "The termination mode \"stop\" has been removed. "+
			"For an ungraceful shutdown, please use \"cancel\" instead. For a graceful shutdown, please use \"jobs/:jobId/stop\" instead.", nil)
	default:
		return badParams("Cannot resolve query parameter (mode) from value \"" + mode + "\".")
	}
	jobID := rc.params["jobid"]
	j := jm.job(jobID)
	if j == nil {
		return restError(http.StatusNotFound, classRestHandler, "Job could not be found.", jobNotFound(jobID))
	}
	if j.state == stateFinished || j.state == stateFailed {
		return restError(http.StatusConflict, classRestHandler, "Job cancellation failed because the job has already reached another terminal state ("+j.state+").", nil)
	}
	jm.cancel(j, rc.now)
	return respondAccepted(map[string]any{})
}

func (jm *JobManager) handleSavepointTrigger(rc *reqCtx) response {
	const class = classSavepointTrigger
	var body struct {
		TargetDirectory *string `json:"target-directory"`
		CancelJob       *bool   `json:"cancel-job"`
		FormatType      *string `json:"formatType"`
		TriggerID       *string `json:"triggerId"`
	}
	if bad := jm.decodeRequest(class, rc.body, &body); bad != nil {
		return *bad
	}
	triggerID, format, dir, bad := jm.parseSavepointRequest(class, body.TriggerID, body.FormatType, body.TargetDirectory, "target-directory")
	if bad != nil {
		return *bad
	}
	mode := modeSavepoint
	if body.CancelJob != nil && *body.CancelJob {
		mode = modeCancelJob
	}
	id := jm.triggerSavepoint(rc.now, rc.params["jobid"], triggerID, dir, format, mode)
	return respondAccepted(map[string]string{"request-id": id})
}

func (jm *JobManager) handleStop(rc *reqCtx) response {
	const class = classStopWithSavepoint
	var body struct {
		TargetDirectory *string `json:"targetDirectory"`
		Drain           *bool   `json:"drain"`
		FormatType      *string `json:"formatType"`
		TriggerID       *string `json:"triggerId"`
	}
	if bad := jm.decodeRequest(class, rc.body, &body); bad != nil {
		return *bad
	}
	triggerID, format, dir, bad := jm.parseSavepointRequest(class, body.TriggerID, body.FormatType, body.TargetDirectory, "targetDirectory")
	if bad != nil {
		return *bad
	}
	id := jm.triggerSavepoint(rc.now, rc.params["jobid"], triggerID, dir, format, modeStop)
	return respondAccepted(map[string]string{"request-id": id})
}

// parseSavepointRequest reads what savepoint and stop-with-savepoint requests share, in the order
// Flink reports problems: the trigger id, the format, then the target directory.
func (jm *JobManager) parseSavepointRequest(class string, triggerID, formatType, targetDir *string, dirProperty string) (string, string, string, *response) {
	id, bad := parseTriggerID(triggerID, class)
	if bad != nil {
		return "", "", "", bad
	}
	format, bad := parseFormat(formatType, class)
	if bad != nil {
		return "", "", "", bad
	}
	dir, bad := jm.savepointDir(targetDir, dirProperty)
	if bad != nil {
		return "", "", "", bad
	}
	return id, format, dir, nil
}

// savepointDir resolves the target directory, failing synchronously (400) when
// neither the request nor the configuration names one.
func (jm *JobManager) savepointDir(requested *string, property string) (string, *response) {
	if requested != nil && strings.TrimSpace(*requested) != "" {
		return normalizePath(*requested), nil
	}
	if jm.cfg.savepointDir != "" {
		return jm.cfg.savepointDir, nil
	}
	resp := restError(http.StatusBadRequest, classRestHandler, "Config key [execution.checkpointing.savepoint-dir] is not set. Property ["+
		property+"] must be provided.", nil)
	return "", &resp
}

func (jm *JobManager) handleSavepointStatus(rc *reqCtx) response {
	op := jm.findOperation(opSavepoint, rc.params["jobid"], rc.params["triggerid"])
	if op == nil {
		return restError(http.StatusNotFound, classRestHandler, "There is no savepoint operation with triggerId="+
			rc.params["triggerid"]+" for job "+rc.params["jobid"]+".", nil)
	}
	if !op.done {
		return inProgress()
	}
	if op.failure != nil {
		return completed(map[string]any{"failure-cause": op.failure.serialized()})
	}
	return completed(map[string]any{"location": op.location})
}

func (jm *JobManager) handleDisposal(rc *reqCtx) response {
	var body struct {
		Path *string `json:"savepoint-path"`
	}
	if bad := jm.decodeRequest(classSavepointDisposal, rc.body, &body); bad != nil {
		return *bad
	}
	path := ""
	if body.Path != nil {
		path = *body.Path
	}
	return respondOK(map[string]string{"request-id": jm.triggerDisposal(rc.now, path)})
}

func (jm *JobManager) handleDisposalStatus(rc *reqCtx) response {
	for _, op := range jm.ops {
		if op.kind == opDisposal && op.triggerID == rc.params["triggerid"] {
			if !op.done {
				return inProgress()
			}
			if op.failure != nil {
				return completed(map[string]any{"failure-cause": op.failure.serialized()})
			}
			return completed(map[string]any{})
		}
	}
	return restError(http.StatusNotFound, classNotFound, "Operation not found under key: "+rc.params["triggerid"], nil)
}

type jarRunBody struct {
	EntryClass            *string           `json:"entryClass"`
	ProgramArgs           *string           `json:"programArgs"`
	ProgramArgsList       []string          `json:"programArgsList"`
	Parallelism           *int              `json:"parallelism"`
	JobID                 *string           `json:"jobId"`
	AllowNonRestoredState *bool             `json:"allowNonRestoredState"`
	SavepointPath         *string           `json:"savepointPath"`
	RestoreMode           *string           `json:"restoreMode"`
	ClaimMode             *string           `json:"claimMode"`
	FlinkConfiguration    map[string]string `json:"flinkConfiguration"`
}

// handleJarRun runs a jar's main(), which submits one job. Errors follow the
// order of Flink's handler: body parsing, argument checks, jar lookup, submission.
func (jm *JobManager) handleJarRun(rc *reqCtx) response {
	const class = classJarRun
	var body jarRunBody
	// A property the release lacks is refused or dropped (decodeRequest): Flink 2.x runs a job sent
	// programArgs without its arguments.
	if bad := jm.decodeRequest(class, rc.body, &body); bad != nil {
		return *bad
	}
	q := rc.r.URL.Query()
	if !jm.has(class, "programArgs") {
		q.Del("program-args") // removed with the body property; an unknown query parameter is ignored
	}
	for _, m := range []*string{body.RestoreMode, body.ClaimMode} {
		if m != nil && *m != "CLAIM" && *m != "NO_CLAIM" && *m != "LEGACY" {
			return badRequestFormat(class, errInvalidEnum("claimMode", *m))
		}
	}
	jobID := ""
	if body.JobID != nil {
		if !hex32.MatchString(*body.JobID) {
			return badRequestFormat(class, fmt.Errorf("cannot parse job id %q", *body.JobID))
		}
		jobID = strings.ToLower(*body.JobID)
	}
	hasArgs := (body.ProgramArgs != nil && *body.ProgramArgs != "") || q.Get("program-args") != ""
	hasArgList := len(body.ProgramArgsList) > 0 || q.Get("programArg") != ""
	if hasArgs && hasArgList {
		return restError(http.StatusBadRequest, classRestHandler,
			"Confusing request: programArgs and programArgsList are specified, please, use only programArgsList", nil)
	}
	parallelism := 0
	if body.Parallelism != nil {
		parallelism = *body.Parallelism
	} else if v := q.Get("parallelism"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return badParams("Cannot resolve query parameter (parallelism) from value \"" + v + "\".")
		}
		parallelism = n
	}
	if parallelism <= 0 {
		parallelism = jm.cfg.parallelism
		if n, err := strconv.Atoi(body.FlinkConfiguration["parallelism.default"]); err == nil && n > 0 {
			parallelism = n
		}
	}
	jarID := rc.params["jarid"]
	if !jm.jarExists(jarID) {
		missing := newThrowable(classRestHandler, "Jar file "+jm.cfg.uploadDir+"/"+jarID+" does not exist", nil)
		return internalError(newThrowable(classCompletion, missing.String(), missing))
	}
	if jobID == "" {
		jobID = strings.ToLower(body.FlinkConfiguration["$internal.pipeline.job-id"])
	}
	if jobID == "" {
		jobID = randomHex(32)
	}
	entryClass := deref(body.EntryClass)
	if entryClass == "" {
		entryClass = q.Get("entry-class")
	}
	savepointPath := deref(body.SavepointPath)
	if savepointPath == "" {
		savepointPath = q.Get("savepointPath")
	}
	req := submitRequest{jarID: jarID, entryClass: entryClass, jobID: jobID, savepointPath: savepointPath,
		parallelism: parallelism, args: programArgs(body, q), userConfig: copyMap(body.FlinkConfiguration)}
	answer := map[string]string{"jobid": jobID}
	if hasApplications(jm.flinkVersion) {
		// The job's SingleJobApplication has the job's id, and is refused before the job is.
		req.applicationID, answer["applicationId"] = jobID, jobID
		if jm.applicationTaken(jobID) {
			return duplicateSubmission(jm.jobName(req), duplicateApplication())
		}
	}
	if jm.isDuplicate(jobID) {
		return duplicateSubmission(jm.jobName(req), duplicateJob())
	}
	if d := jm.currentFaults().SubmitRegistersAfter; d > 0 {
		jm.pending = append(jm.pending, &pendingSubmit{req: req, at: rc.now.Add(d)})
		return response{drop: true}
	}
	if cause := jm.restoreRefusal(req, body.AllowNonRestoredState != nil && *body.AllowNonRestoredState); cause != nil {
		return jm.refuseRestore(rc.now, req, cause)
	}
	jm.submit(rc.now, req, nil)
	return respondOK(answer)
}

// programArgs are the arguments main() gets; an HA cluster persists them with the job.
func programArgs(body jarRunBody, q url.Values) []string {
	switch {
	case len(body.ProgramArgsList) > 0:
		return body.ProgramArgsList
	case len(q["programArg"]) > 0:
		return q["programArg"]
	case deref(body.ProgramArgs) != "":
		return TokenizeArguments(*body.ProgramArgs)
	}
	return TokenizeArguments(q.Get("program-args"))
}

// argumentToken is Flink's pattern for one argument of programArgs (JarHandlerUtils): a run of
// non-space characters that does not start with a quote, or a quoted string, each then stripped
// of every quote character.
var argumentToken = regexp.MustCompile(`([^"']\S*|".+?"|'.+?')\s*`)

// TokenizeArguments splits a programArgs string as Flink 1.x does.
func TokenizeArguments(args string) []string {
	var out []string
	for _, m := range argumentToken.FindAllString(args, -1) {
		out = append(out, strings.NewReplacer(`"`, "", "'", "").Replace(strings.TrimSpace(m)))
	}
	return out
}

func (jm *JobManager) jobName(req submitRequest) string {
	if n := req.userConfig["pipeline.name"]; n != "" {
		return n
	}
	if n := jm.cfg.raw["pipeline.name"]; n != "" {
		return n
	}
	return defaultJobName
}

// duplicateJob and duplicateApplication are what the Dispatcher refuses a job id already taken
// with: from 2.3 on, the job's application of the same id is refused first.
func duplicateJob() *throwable {
	return newThrowable(classDuplicateSubmit, "Job has already been submitted.", nil)
}

func duplicateApplication() *throwable {
	return newThrowable(classDuplicateApplication, "Application has already been submitted.", nil)
}

func duplicateSubmission(jobName string, dup *throwable) response {
	fe := newThrowable("org.apache.flink.util.FlinkException", "Failed to execute job '"+jobName+"'.", dup)
	pie := newThrowable("org.apache.flink.client.program.ProgramInvocationException",
		"The main method caused an error: Failed to execute job '"+jobName+"'.", fe)
	fre := newThrowable("org.apache.flink.util.FlinkRuntimeException", "Could not execute application.", pie)
	ce := newThrowable(classCompletion, fre.String(), fre)
	return restError(http.StatusBadRequest, classRestHandler, "Could not execute application.", ce)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
