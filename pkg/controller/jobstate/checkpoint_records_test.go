package jobstate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/checkpointbook"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

func recordsOf(st *v1beta1.JobOwnerStatus, book *checkpointbook.Book, now time.Time) CheckpointRecords {
	return CheckpointRecords{Status: st, Book: book, Key: checkpointbook.Key{Namespace: "ns", Kind: "FlinkApplication", Name: "wc"},
		Page: func() *corev1.ConfigMap { return nil }, Now: now, RecordInterval: time.Minute, StatusInterval: 10 * time.Minute,
		BookInterval: 10 * time.Second, Phase: func(string, time.Duration) int64 { return 0 }}
}

// A job's first record goes to status; the ones after it to the book until status's slot comes;
// the newest recorded checkpoint is the book's when it is newer than status's, and of that job.
func TestCheckpointsAreRecordedInTheBookBetweenStatusSlots(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 30, 0, time.UTC)
	st := &v1beta1.JobOwnerStatus{}
	r := recordsOf(st, checkpointbook.New(fake.NewSimpleClientset(), nil), now)
	chk := func(n int, at time.Time) *client.Checkpoint {
		return &client.Checkpoint{ExternalPath: "file:/cp/" + job + "/chk-" + string(rune('0'+n)), TriggerTimestamp: at.UnixMilli()}
	}
	assert.False(t, r.RecordInBook(time.Minute, 10*time.Second, job, chk(1, now), now), "a job's first record is status's")

	first := now.Add(-time.Minute)
	st.JobStatus = v1beta1.FlinkJobStatus{JobID: job, LastCheckpointPath: chk(1, first).ExternalPath, LastCheckpointTime: MsTime(first.UnixMilli())}
	assert.True(t, r.RecordInBook(time.Minute, 10*time.Second, job, chk(2, now), now))
	path, at := r.Recorded()
	assert.Equal(t, chk(2, now).ExternalPath, path, "the book's record is newer than status's")
	assert.Equal(t, now, at)
	assert.Equal(t, chk(2, now).ExternalPath, r.WithRecorded(&st.JobStatus).LastCheckpointPath)

	st.JobStatus.JobID = "another job"
	path, _ = r.Recorded()
	assert.Equal(t, chk(1, first).ExternalPath, path, "a book entry of another job is not this job's record")

	assert.Equal(t, 10*time.Second, r.Delay())
	assert.Zero(t, recordsOf(st, nil, now).Delay(), "no book, no wait for its page")
	assert.EqualValues(t, 10, r.StatusCheckpointEvery())
}

func TestAJobManagersClockAheadNeverDatesAStateInTheFuture(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	assert.Equal(t, now, TakenByFlink(now, now.Add(time.Hour).UnixMilli()))
	assert.True(t, now.Add(-time.Second).Equal(TakenByFlink(now, now.Add(-time.Second).UnixMilli())))
	assert.Equal(t, metav1.NewTime(now), *MsTime(now.UnixMilli()))
}
