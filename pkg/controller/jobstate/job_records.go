package jobstate

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// JobParams are what a job is submitted with; status keeps those of the running job so that a
// rollback can start it again as it was.
type JobParams struct {
	JarName, EntryClass, ProgramArgs string
	Parallelism                      int32
	AllowNonRestoredState            bool
	// Args are the program's arguments one per item (a session job's args, a FlinkApplication's
	// programArgsList); ProgramArgs is a FlinkApplication's string, split as Flink 1.x splits it.
	// FlinkConfig is a session job's own Flink configuration.
	Args        []string
	FlinkConfig map[string]string
	// Uploaded is set when JarName is a jar the operator uploaded, which a JobManager can lose.
	Uploaded bool
}

// StatusJobParams are the parameters status keeps of the running job.
func StatusJobParams(st *v1beta1.JobOwnerStatus) JobParams {
	j := st.JobStatus
	return JobParams{JarName: j.JarName, EntryClass: j.EntryClass, ProgramArgs: j.ProgramArgs, Parallelism: j.Parallelism,
		AllowNonRestoredState: j.AllowNonRestoredState}
}

// RecordIn keeps the parameters in status, as those of the running job.
func (p JobParams) RecordIn(st *v1beta1.JobOwnerStatus) {
	j := &st.JobStatus
	j.JarName, j.EntryClass, j.ProgramArgs, j.Parallelism, j.AllowNonRestoredState =
		p.JarName, p.EntryClass, p.ProgramArgs, p.Parallelism, p.AllowNonRestoredState
}

// OwnerOf names an object's jobs to the job core: by its name, with its kind for the session kinds
// (a session job may share its name with a FlinkApplication; ids were made so before uids were
// read), and by its uid.
func OwnerOf(kind string, meta *metav1.ObjectMeta) jobs.Owner {
	name := meta.Namespace + "/" + meta.Name
	if kind != v1beta1.FlinkApplicationKind {
		name = kind + "/" + name
	}
	return jobs.Owner{Name: name, UID: string(meta.UID)}
}

// RecordJob and StoreJob carry a deployment record's job to and from the job core's record.
func RecordJob(rec *v1beta1.DeploymentRecord) jobs.Job {
	j := jobs.Job{Cluster: rec.ClusterHash, ID: rec.JobID, Application: rec.ApplicationID}
	if rec.SubmittedAt != nil {
		j.SubmittedAt = rec.SubmittedAt.Time
	}
	return j
}

func StoreJob(rec *v1beta1.DeploymentRecord, j jobs.Job) {
	if rec.JobID != j.ID {
		// What was dated of the record's job was of another job.
		rec.SlotsGrantedAt = nil
	}
	rec.ClusterHash, rec.JobID, rec.ApplicationID, rec.SubmittedAt = j.Cluster, j.ID, j.Application, nil
	if !j.SubmittedAt.IsZero() {
		t := metav1.NewTime(j.SubmittedAt)
		rec.SubmittedAt = &t
	}
}
