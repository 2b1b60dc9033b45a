package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
)

// DefaultLeaseName is the leader Lease of an operator that owns every application: the name every
// operator used before shards, kept so that upgrading one changes nothing.
const DefaultLeaseName = "flinkfsm-leader"

// Shard is the label selector of shardSelector, nil when the operator owns every object of its
// namespaces. A selector that does not parse fails with the key's name, before anything starts.
func (c *Config) Shard() (labels.Selector, error) {
	text := strings.TrimSpace(c.ShardSelector)
	if text == "" {
		return nil, nil
	}
	sel, err := labels.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("operator.shardSelector %q is not a Kubernetes label selector: %w", c.ShardSelector, err)
	}
	if sel.Empty() {
		return nil, nil
	}
	return sel, nil
}

// ShardIdentity says which applications this instance owns, in one canonical form: its namespaces
// sorted and its selector as Kubernetes prints it; "" for an operator that owns all of them. Two
// instances with the same identity overlap entirely.
func (c *Config) ShardIdentity() string {
	namespaces := slices.Clone(c.Namespaces())
	slices.Sort(namespaces)
	namespaces = slices.Compact(namespaces)
	var parts []string
	if len(namespaces) > 0 {
		parts = append(parts, "namespaces="+strings.Join(namespaces, ","))
	}
	if sel, err := c.Shard(); err == nil && sel != nil {
		parts = append(parts, "selector="+sel.String())
	}
	return strings.Join(parts, ";")
}

// LeaseName is the leader Lease's name: leaderElection.leaseName when set; otherwise
// flinkfsm-leader for an operator that owns every application, and for a shard a name made from
// its identity, readable and with a hash of it, so that the replicas of one shard compete for one
// Lease and those of two shards never share one (two releases of the chart in one namespace).
func (c *Config) LeaseName() string {
	if c.LeaderElection.LeaseName != "" {
		return c.LeaderElection.LeaseName
	}
	id := c.ShardIdentity()
	if id == "" {
		return DefaultLeaseName
	}
	sum := sha256.Sum256([]byte(id))
	hash := hex.EncodeToString(sum[:])[:8]
	// What the identity names, without the keys ("team-a-flinkfsm-io-shard-a"), cut so that the
	// name stays within a DNS label.
	readable := strings.NewReplacer("namespaces=", "", "selector=", "").Replace(id)
	readable = strings.Trim(notNameChars.ReplaceAllString(strings.ToLower(readable), "-"), "-")
	if len(readable) > 36 {
		readable = strings.TrimRight(readable[:36], "-")
	}
	if readable == "" {
		return DefaultLeaseName + "-" + hash
	}
	return DefaultLeaseName + "-" + readable + "-" + hash
}

var notNameChars = regexp.MustCompile(`[^a-z0-9]+`)
