// Public surface of the Uuid operator.
export { GROUP, KIND, PLURAL, uuidOperator, type UuidOperatorOptions, VERSION } from "./uuid_operator.ts";
export { decide, type Decision, OK_MESSAGE } from "./status_rule.ts";
