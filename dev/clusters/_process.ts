// The process helpers of dev/clusters and dev/support/fault_cluster.ts: the shipped ones of the test kit
// (src/testing/process.ts), imported from here so dev/ keeps one import path.

export * from "../../src/testing/process.ts";
