// Public surface of the Mirror operator.
export {
  FIELD_MANAGER,
  MIRROR_FINALIZER,
  MIRROR_RESOURCE,
  mirrorOperator,
  type MirrorOptions,
  type MirrorSpec,
  selectTargets,
} from "./mirror_operator.ts";
export { ANNOTATIONS, copyDiff, desiredCopy, MIRROR_LABEL, MIRROR_LABEL_VALUE, mirrorOf } from "./copy.ts";
export { type MirrorStatus, nextStatus, sameStatus, type TargetRow, type TargetState } from "./mirror_status.ts";
