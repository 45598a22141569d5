// Public surface of src/testing: the multi-cluster test kit (the root `testing.ts` entry point re-exports it).

export { type RunningOperators, type RunOptions, TestEnv, testEnv, type TestEnvOptions } from "./env/test_env.ts";
export { TestEnvError } from "./env/test_env_error.ts";
export { eventually, type EventuallyOptions, EventuallyTimeoutError } from "./eventually.ts";
export type { KitClient, KitNewObject, KitObject, KitObjectOf, KitRef } from "./kit_client.ts";
export type { CrdSource } from "./env/_env_crds.ts";
export {
  kitCacheRoot,
  KUBE_VERSION,
  type KubeBinaries,
  kubeBinaries,
  type KubeBinariesOptions,
  KubeBuildError,
} from "./kube_binaries.ts";
