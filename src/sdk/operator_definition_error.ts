// The error a wrong operator definition throws at definition time (a bad name, a handler option out of range).

/**
 * An operator definition that cannot work: the message names the field and the value seen.
 *
 * @example
 * ```ts
 * import { defineOperator, OperatorDefinitionError } from "../../sdk.ts";
 *
 * try {
 *   defineOperator({
 *     name: "My_Operator",
 *     resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
 *     reconcile: async () => {},
 *   });
 * } catch (err) {
 *   if (err instanceof OperatorDefinitionError) console.error(err.message); // invalid operator name "My_Operator": ...
 * }
 * ```
 */
export class OperatorDefinitionError extends TypeError {
  /** Always "OperatorDefinitionError". */
  override name = "OperatorDefinitionError";
}
