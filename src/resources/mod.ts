// Public surface of src/resources: custom resources defined once, their types and their CRDs.
export {
  defineResource,
  type ObjectOf,
  type PrinterColumn,
  type Resource,
  type ResourceDefinition,
  ResourceDefinitionError,
  type Static,
  type TSchema,
  type TypedObject,
} from "./define_resource.ts";
export { type CrdDocument, crdOf, isResource } from "./crd_document.ts";
export { type SchemaProps, StructuralSchemaError } from "./structural_schema.ts";
// What a Resource extends (documented in "./kube" and at the root), so this entry point documents on its own.
export type { ResourceType } from "../kube/mod.ts";
