// Public surface of tests/support: helpers for end-to-end tests against the real local clusters. The helpers that the
// bench uses too live in dev/support/ and are re-exported here; what only tests use lives beside this file.
export * from "../../dev/support/mod.ts";
// Fault injection (tests/faults/, tests/soak.ts): request-level fault proxies and the fault scenario harness.
export * from "./intercept_proxy.ts";
export * from "./fault_harness.ts";
