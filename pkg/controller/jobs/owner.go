package jobs

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strings"

	"github.com/flinkfsm/flinkfsm/pkg/idsource"
)

// NewID returns 32 lowercase hex characters, the form Flink uses for job and trigger ids.
func NewID() string { return ids.Hex(32) }

// ids is where NewID draws its randomness.
var ids idsource.Source

// UseIDSource makes NewID read from r until the returned function restores the source before: a
// seeded run then replays exactly (see pkg/idsource).
func UseIDSource(r io.Reader) (restore func()) { return ids.Use(r) }

// Owner describes who owns the jobs an operation works on, without saying what kind of object
// that is.
type Owner struct {
	// Name names the owner among all objects that run jobs, kind included ("FlinkSessionJob/ns/name"):
	// objects of one name share the first part of their job ids, so a job that a deleted object of
	// the same name left running is recognised and never adopted.
	Name string
	// UID is the object's uid: a re-created object has another, so its jobs are told from its
	// predecessor's.
	UID string
	// SharedCluster is set when other owners' jobs run on the same cluster (a session cluster): the
	// fence before a submission then passes by jobs that are not this owner's.
	SharedCluster bool
	// Beside are jobs of this owner that may run while another is started (a BlueGreen version's
	// deployed job): the fence neither adopts them nor stops for them.
	Beside []string
}

// The two halves of a job id's owner prefix, in hex characters.
const namePart, uidPart = 8, 8

// NewJobID is a job id that names its owner: 8 hex characters from its name, 8 from its uid, the
// rest random. A job found on a cluster with the whole prefix was started by this owner, so the
// fence adopts it; one with the name's part only was left by an earlier object of the same name.
func (o Owner) NewJobID() string {
	prefix := o.prefix()
	return prefix + NewID()[len(prefix):]
}

func (o Owner) prefix() string {
	if o.UID == "" {
		// Objects from before uids were read (tests, status written by older versions): the name
		// alone, as job ids were made then.
		return legacyPrefix(o.Name)
	}
	return hexHash(o.Name)[:namePart] + hexHash(o.UID)[:uidPart]
}

// Started tells whether this owner started the job: its id carries the owner's prefix.
func (o Owner) Started(jobID string) bool { return strings.HasPrefix(jobID, o.prefix()) }

// Predecessor tells whether the job was started by another object of the same name: an earlier
// one deleted while its job ran on (deleteMode None), or this object before the operator knew
// uids (its jobs are recorded in its status, which is how they stay its own).
func (o Owner) Predecessor(jobID string) bool { return !o.Started(jobID) && o.Named(jobID) }

// Named tells whether the job was started by an object of the owner's name: this one or another.
func (o Owner) Named(jobID string) bool { return strings.HasPrefix(jobID, hexHash(o.Name)[:namePart]) }

// legacyPrefix is the 12-character prefix job ids had before they carried the owner's uid. Its
// first 8 characters are the name part of today's prefix, so such a job counts as a predecessor's.
func legacyPrefix(name string) string { return hexHash(name)[:12] }

func hexHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
