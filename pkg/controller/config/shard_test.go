package config

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A selector that does not parse stops the operator at start, naming the key; an empty one owns all.
func TestShardSelectorIsValidatedAtStart(t *testing.T) {
	cfg := Default()
	cfg.ShardSelector = "team in (x,"
	err := cfg.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "operator.shardSelector")
	assert.Contains(t, err.Error(), `"team in (x,"`)

	for _, ok := range []string{"", "  ", "flinkfsm.io/shard=a", "team in (x,y)", "!legacy", "tier notin (batch), team"} {
		cfg.ShardSelector = ok
		assert.NoError(t, cfg.Validate(), ok)
	}
	cfg.ShardSelector = " "
	sel, err := cfg.Shard()
	require.NoError(t, err)
	assert.Nil(t, sel, "a blank selector owns every object")
}

// The lease is flinkfsm-leader for an operator that owns all (as before shards), and otherwise
// named after the shard: the replicas of one shard share it, two shards never do, however they
// spell the same selector.
func TestLeaseNameFollowsTheShard(t *testing.T) {
	lease := func(namespaces, selector, name string) string {
		c := Default()
		c.LimitNamespace, c.ShardSelector, c.LeaderElection.LeaseName = namespaces, selector, name
		return c.LeaseName()
	}
	assert.Equal(t, DefaultLeaseName, lease("", "", ""))
	assert.Equal(t, "mine", lease("a", "x=y", "mine"), "a configured name wins")

	a := lease("", "flinkfsm.io/shard=a", "")
	assert.Regexp(t, `^flinkfsm-leader-flinkfsm-io-shard-a-[0-9a-f]{8}$`, a)
	assert.Equal(t, a, lease("", " flinkfsm.io/shard = a ", ""), "the same selector spelt otherwise")
	assert.NotEqual(t, a, lease("", "flinkfsm.io/shard=b", ""))
	assert.NotEqual(t, a, lease("", "flinkfsm.io/shard==a,x", ""))

	ns := lease("team-b,team-a", "", "")
	assert.Regexp(t, `^flinkfsm-leader-team-a-team-b-[0-9a-f]{8}$`, ns)
	assert.Equal(t, ns, lease("team-a, team-b,team-a", "", ""), "namespaces in any order")
	assert.NotEqual(t, ns, lease("team-a", "", ""))
	assert.NotEqual(t, ns, lease("team-a,team-b", "x=y", ""))

	long := lease("a-namespace-with-a-long-name,another-namespace-with-a-long-name", "team in (analytics,billing,search)", "")
	assert.LessOrEqual(t, len(long), 63)
	assert.Regexp(t, regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`), long, "a DNS label")
}
