package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A create the API server timed out is tried again; one that was stored all the same answers
// AlreadyExists then, which is success. Other errors end the run as before.
func TestACreateTheAPIServerTimedOutIsTriedAgain(t *testing.T) {
	firstRetryWait = time.Millisecond
	defer func() { firstRetryWait = time.Second }()
	gr := schema.GroupResource{Resource: "services"}
	answers := func(errs ...error) (func(context.Context) error, *int) {
		tries := 0
		return func(context.Context) error {
			tries++
			return errs[min(tries, len(errs))-1]
		}, &tries
	}

	create, tries := answers(apierrors.NewTimeoutError("request did not complete within requested timeout", 0), apierrors.NewAlreadyExists(gr, "s"))
	assert.NoError(t, createRetrying(context.Background(), create))
	assert.Equal(t, 2, *tries)

	create, tries = answers(apierrors.NewInternalError(errors.New("etcdserver: request timed out")), nil)
	assert.NoError(t, createRetrying(context.Background(), create))
	assert.Equal(t, 2, *tries)

	create, tries = answers(apierrors.NewAlreadyExists(gr, "s"))
	assert.Error(t, createRetrying(context.Background(), create), "AlreadyExists at the first try is the run's mistake")
	assert.Equal(t, 1, *tries)

	create, tries = answers(apierrors.NewServerTimeout(gr, "create", 1))
	assert.Error(t, createRetrying(context.Background(), create))
	assert.Equal(t, 5, *tries, "five tries, then the run ends")
}
