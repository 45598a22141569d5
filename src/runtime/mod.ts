// Public surface of src/runtime: watcher, store, controller loop, reconciler contract, typed client, events. No resource type is named here.
export * from "./store.ts";
export * from "./watcher.ts";
export * from "./reconciler.ts";
export * from "./controller.ts";
export * from "./events.ts";
export * from "./operator.ts";
export * from "./resource_client.ts";
export * from "./retry.ts";
export * from "./health_state.ts";
export * from "./background_tasks.ts";
export * from "./cache_observer.ts";
export * from "./admission.ts";
export * from "./informer.ts";
export * from "./partial_metadata.ts";
