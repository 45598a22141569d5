// Public surface of src/runtime: watcher, store, controller loop, reconciler contract, typed client, events. No resource type is named here.
export * from "./cache/store.ts";
export * from "./cache/field_projection.ts";
export * from "./cache/watcher.ts";
export * from "./reconciler.ts";
export * from "./controller.ts";
export * from "./events.ts";
export * from "./operator.ts";
export * from "./resource_client.ts";
export * from "./kube_resource_client.ts";
export * from "./retry.ts";
export * from "./health_state.ts";
export * from "./background_tasks.ts";
export * from "./cache/cache_observer.ts";
export * from "./admission.ts";
export * from "./cache/informer.ts";
export * from "./cache/partial_metadata.ts";
