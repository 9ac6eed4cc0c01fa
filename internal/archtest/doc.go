// Package archtest holds Sluice's dependency rules, as a test that reads
// the module's import graph with `go list` and fails on an import that goes
// the wrong way (see archtest_test.go and docs/architecture.md). It has no
// code of its own.
package archtest
