// Package testkit holds the integration suites' small helpers that need nothing but the API types:
// namespaces for tests, and what failure messages say about an application. It imports neither the
// simulator nor the local environment, so the portable suite may use it too.
package testkit
