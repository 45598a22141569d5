// Public surface of src/resources: custom resources defined once, their types and their CRDs.
export {
  defineResource,
  type ObjectOf,
  type PrinterColumn,
  type Resource,
  type ResourceDefinition,
  ResourceDefinitionError,
  type TypedObject,
} from "./define_resource.ts";
export { type CrdDocument, crdOf, isResource } from "./crd_document.ts";
export { type SchemaProps, StructuralSchemaError } from "./structural_schema.ts";
