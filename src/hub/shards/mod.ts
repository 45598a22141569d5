// Public surface of src/hub/shards: the coordinator, its state table, rendezvous hashing (plain and bounded-load).
export * from "./rendezvous.ts";
export * from "./bounded_rendezvous.ts";
export * from "./shard_table.ts";
export * from "./shard_status.ts";
export * from "./lease_names.ts";
export * from "./shard_coordinator.ts";
