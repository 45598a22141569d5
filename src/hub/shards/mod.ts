// Public surface of src/hub/shards: the coordinator (peer and fence Leases), its state table and rendezvous hashing.
export * from "./rendezvous.ts";
export * from "./shard_table.ts";
export * from "./shard_coordinator.ts";
