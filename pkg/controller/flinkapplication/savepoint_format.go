package flinkapplication

// warnOfUnavailableFormat says, with a Warning Event, that the spec asks for native savepoints of a
// Flink release that cannot take them. The caller calls it once per spec generation.
func warnOfUnavailableFormat(rc *Context) {
	if why := rc.Settings.UnavailableFormat(rc.ClusterOwner.Spec.FlinkVersion); why != "" {
		rc.Event(true, "SavepointFormatUnavailable", why)
	}
}
