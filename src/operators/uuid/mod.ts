// Public surface of the Uuid operator.
export { UUID_RESOURCE, uuidOperator } from "./uuid_operator.ts";
export { decide, type Decision, OK_MESSAGE, statusFor } from "./status_rule.ts";
