package watch

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Shards (docs/operations.md, "Running several operator instances"). With a shard selector the
// informers of the kinds the machine runs list and watch only what it selects (itemwise.go), and
// what wakes an owner (its children, its FlinkSnapshots, its session jobs) wakes it only while it is
// in the shard; FlinkSnapshots and the objects the operator owns are cached whatever their owner's
// shard.

// ShardSelector is the shard's label selector as list options carry it; "" for all.
func ShardSelector(shard labels.Selector) string {
	if shard == nil {
		return ""
	}
	return shard.String()
}

// InShard tells whether the shard selects an object by its labels; true when the operator owns all
// (a nil shard).
func InShard(shard labels.Selector, m metav1.Object) bool {
	return shard == nil || shard.Matches(labels.Set(m.GetLabels()))
}

// outsideShard are the selectors that together list what the shard does not select: one per
// requirement, negated (the shard is their conjunction). A requirement with no negation a
// selector can say (key>3) makes it list everything; the caller filters either way.
func outsideShard(shard labels.Selector) []string {
	reqs, _ := shard.Requirements()
	var out []string
	for _, r := range reqs {
		var op selection.Operator
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals:
			op = selection.NotEquals
		case selection.NotEquals:
			op = selection.Equals
		case selection.In:
			op = selection.NotIn
		case selection.NotIn:
			op = selection.In
		case selection.Exists:
			op = selection.DoesNotExist
		case selection.DoesNotExist:
			op = selection.Exists
		default:
			return []string{""}
		}
		neg, err := labels.NewRequirement(r.Key(), op, r.Values().List())
		if err != nil {
			return []string{""}
		}
		out = append(out, labels.NewSelector().Add(*neg).String())
	}
	return out
}

// OtherShards lists, live, the objects of a namespace outside the shard: list(selector) lists one
// selector's objects. Used where the operator must not act as if they did not exist (retention, a
// session cluster's removal), which happens seldom; the caller lists from the API server's watch
// cache.
func OtherShards[T metav1.Object](shard labels.Selector, list func(selector string) ([]T, error)) ([]T, error) {
	seen := map[string]bool{}
	var out []T
	for _, sel := range outsideShard(shard) {
		items, err := list(sel)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			if !seen[it.GetName()] && !shard.Matches(labels.Set(it.GetLabels())) {
				seen[it.GetName()] = true
				out = append(out, it)
			}
		}
	}
	return out, nil
}
