// Public surface of src/runtime: watcher, store, controller loop, reconciler contract, events. No resource type is named here.
export * from "./store.ts";
export * from "./watcher.ts";
export * from "./reconciler.ts";
export * from "./controller.ts";
export * from "./events.ts";
export * from "./operator.ts";
