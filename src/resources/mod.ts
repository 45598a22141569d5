// Public surface of src/resources: custom resources defined once, their types and their CRDs.
export {
  defineResource,
  type PrinterColumn,
  type Resource,
  type ResourceDefinition,
  ResourceDefinitionError,
  type TypedObject,
} from "./define_resource.ts";
