package main

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// firstRetryWait is the wait before a create's second try; each later one waits twice as long.
var firstRetryWait = time.Second

// createRetrying runs a create, again after an answer that says the API server or etcd could not
// finish it in time (a 504, a 429, a 500 timeout): at 10,000 applications a create queued behind
// thousands of others can time out in the API server, and one lost create ended a run of an hour
// in its floor (2026-11-28). A create that timed out may still have been stored, so AlreadyExists
// on a later try is success.
func createRetrying(ctx context.Context, create func(context.Context) error) error {
	wait := firstRetryWait
	for try := 0; ; try++ {
		err := create(ctx)
		switch {
		case err == nil:
			return nil
		case try > 0 && apierrors.IsAlreadyExists(err):
			return nil
		case try >= 4 || !retriable(err):
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// retriable: the API server's own timeout (504) or its handler's (ServerTimeout), throttling,
// and a 500, which is how etcd's "request timed out" reaches a client.
func retriable(err error) bool {
	return apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) || apierrors.IsInternalError(err)
}
