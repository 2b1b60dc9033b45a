// Package clusters holds the Kubernetes objects of one Flink cluster: what the informers' caches
// hold of them, how they group into clusters, how far a starting cluster got and what keeps its
// pods from running, the pod policy a cluster's spec is held to, and the writes that create, scale,
// point and delete them, with the UI Ingress and the clean-up of Flink's HA ConfigMaps.
//
// It knows no kind, no phase and no pass. Its writes take a Writer and plain values (the cluster
// owner, the hash, the colour, the objects as the pass read them) and return what they made and
// the Events a user should see, as values; the caller keeps its working copy and sends its Events.
// A failed write is an *Error, marked as one another attempt may get past or not.
package clusters
