// Public surface of src/util: pure helpers that import nothing else from src/.
export * from "./clock.ts";
export * from "./backoff.ts";
export * from "./logger.ts";
export * from "./log_burst.ts";
export * from "./semaphore.ts";
export * from "./bytes.ts";
export * from "./records.ts";
