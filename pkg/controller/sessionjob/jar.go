package sessionjob

import (
	"errors"
	"fmt"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jars"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
)

// jarBusyRetry is how soon a job whose jar could not be fetched, because as many fetches as the
// operator allows were in flight, tries again; jarFetchPoll how often a job looks at its fetch in
// flight, should the fetch's wake-up be missed.
const (
	jarBusyRetry = 2 * time.Second
	jarFetchPoll = 5 * time.Second
)

// uploadJar fetches the recorded spec's jar under the operator's jar policy (scheme, host, address,
// size, time, SHA-256) and uploads it to the record's cluster; local:// names a jar the cluster
// already has. The jar id is recorded before the job is run from it. A jar the policy refuses, or
// whose checksum differs, fails the deploy with the reason: retrying cannot change it.
func uploadJar(p *Pass, c *v1beta1.DeploymentRecord) fsm.Outcome {
	uri := recordedSessionSpec(c).Job
	if p.Env.Jars == nil {
		return p.DeployFailed("JarRefused", "the operator has no jar policy configured")
	}
	if err := p.Flink().Refused(c.ClusterHash); err != nil {
		// The jar goes to the cluster's own JobManager or nowhere; the phase's deadline bounds the wait.
		p.Machine.Reason, p.Waiting = "waiting to upload the jar: "+err.Error(), kindpass.RefusedServiceReason
		return fsm.Stay(jarFetchPoll)
	}
	// The target cluster is part of the key: a transfer uploads to one JobManager.
	key := p.Key() + "|" + string(p.Meta.UID) + "|" + uri.JarURI + "|" + uri.JarSHA256 + "|" + c.ClusterHash
	transfer := jarTransfer(p.Env, uri.JarURI, uri.JarSHA256, p.FlinkURL(c.ClusterHash), RouteCheck(p.Env, p.ClusterOwner, c.ClusterHash))
	f := p.memory.fetches.fetch(key, p.Env.Clock, transfer, p.Env.WakeLater(p.Pass))
	if f == nil || !f.done {
		// Off the worker: the job waits in its phase, and the transfer wakes it when it ends.
		p.Machine.Reason, p.Waiting = fmt.Sprintf("fetching jar %q", uri.JarURI), "FetchingJar"
		return fsm.Stay(jarFetchPoll)
	}
	p.memory.fetches.take(key)
	jar, err := f.jar, f.err
	switch {
	case errors.Is(err, jars.ErrBusy):
		// Not a failed attempt: the job waits its turn without spending its retries.
		p.Machine.Reason, p.Waiting = "waiting to fetch the jar: "+err.Error(), "WaitingForJarFetch"
		return fsm.Stay(jarBusyRetry)
	case err != nil && jars.IsRetryable(err):
		return fsm.Failed(jobs.Retryable("FetchJar", err))
	case err != nil && isFetchRefusal(err):
		return p.DeployFailed("JarRefused", err.Error())
	case err != nil:
		// The upload failed: the JobManager's answer or the fence; the next pass starts again.
		return fsm.Failed(err)
	case jar.Local:
		c.JarID = jar.ID
		return fsm.PersistThenContinue()
	}
	// A crash before this is persisted leaves the upload behind as an unused jar in the cluster's
	// upload directory, never as a job.
	c.JarID = jar.ID
	p.Event(false, "JarUploaded", fmt.Sprintf("uploaded %q (%d bytes) to the session cluster as %q", uri.JarURI, jar.Size, jar.ID))
	return fsm.PersistThenContinue()
}

// isFetchRefusal tells whether a transfer failed because the jar policy or the checksum refused the
// jar: retrying cannot change that.
func isFetchRefusal(err error) bool {
	var e *jars.Error
	return errors.As(err, &e) && !e.Retryable
}

// deleteUploadedJar removes the jar a job was run from once it is no longer needed: the job runs (a
// restart uploads it again) or it failed. local:// jars are the cluster's own and stay. A delete that
// fails leaves an unused file in the upload directory, which is not worth failing a deploy for.
func deleteUploadedJar(p *Pass, c *v1beta1.DeploymentRecord) {
	if c.JarID == "" || !sessionJobParams(c).Uploaded {
		c.JarID = ""
		return
	}
	if err := p.Flink().Flink().DeleteJar(p, p.FlinkURL(c.ClusterHash), c.JarID); err != nil && !client.IsJarNotFound(err) {
		p.Event(true, "JarNotDeleted", fmt.Sprintf("jar %s stays in the session cluster's upload directory: %v", c.JarID, err))
	}
	c.JarID = ""
}
