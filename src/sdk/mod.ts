// Public surface of src/sdk: what an operator's code imports (define it, its typed client, conflict helpers).
export { defineOperator, type OperatorDefinition, OperatorDefinitionError } from "./define_operator.ts";
export {
  ignoreNotFound,
  type ListOptions,
  type NewObject,
  type ObjectRef,
  type Operator,
  type PatchType,
  type Projection,
  type ReconcileResult,
  type ReconcileScope,
  type Request,
  type ResourceClient,
  type ResourceUse,
  retryOnConflict,
  type RetryOptions,
  type StoredObject,
  TerminalError,
  trimObject,
  type Verb,
} from "../runtime/mod.ts";
export { isConflict, isNotFound, type ResourceType } from "../kube/mod.ts";
