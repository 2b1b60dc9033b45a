// Package suite is what the simulator-backed suites (integ/e2e, integ/lyftcompat) share:
// bringing up one local environment for a test binary, and the check that no two jobs of an
// application ever ran at once.
package suite
