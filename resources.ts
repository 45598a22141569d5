/**
 * Custom resources defined once: {@link defineResource} takes a resource's names and its TypeBox schema, and gives
 * a typed resource for handlers and clients, from which `operator-hub crd FILE` prints the CRD.
 *
 * @example
 * ```ts
 * import Type from "typebox";
 * import { defineResource } from "./resources.ts";
 *
 * export const Website = defineResource({
 *   group: "examples.operator-hub.dev",
 *   version: "v1",
 *   kind: "Website",
 *   plural: "websites",
 *   spec: Type.Object({ image: Type.String() }),
 * });
 * ```
 *
 * @module
 */
export * from "./src/resources/mod.ts";
