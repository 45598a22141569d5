// The apiextensions.k8s.io/v1 CustomResourceDefinition of a defined resource: what `operator-hub crd FILE` prints.

import { type Resource, ResourceDefinitionError } from "./define_resource.ts";
import { type SchemaProps, structuralSchema, StructuralSchemaError } from "./structural_schema.ts";

/**
 * The status field the SDK keeps its handler progress in (src/sdk/handler_state.ts `STATE_FIELD`; the resources
 * room sits below the SDK, so the name is repeated here and a test of the `crd` command checks they agree).
 */
export const SDK_STATUS_FIELD = "handlers";

/** The SDK's own status fields, added to every generated status schema: free-form, so that nothing is pruned. */
const SDK_STATUS: Record<string, SchemaProps> = {
  [SDK_STATUS_FIELD]: {
    description: "The handlers' progress (operator-hub's defineHandlers).",
    type: "object",
    "x-kubernetes-preserve-unknown-fields": true,
  },
};

/**
 * A CustomResourceDefinition as a plain JSON object (`kubectl apply` or a client's `apply` takes it as it is).
 *
 * @example
 * ```ts
 * import { type CrdDocument, crdOf } from "../../resources.ts";
 * import { Website } from "../../examples/website_resource.ts";
 *
 * const crd: CrdDocument = crdOf(Website);
 * console.log(crd.spec.names.kind, crd.spec.versions.map((v) => v.name)); // Website [ "v1" ]
 * await Deno.writeTextFile("website_crd.json", JSON.stringify(crd, null, 2));
 * ```
 */
export interface CrdDocument {
  /** Always `apiextensions.k8s.io/v1`. */
  apiVersion: "apiextensions.k8s.io/v1";
  /** Always `CustomResourceDefinition`. */
  kind: "CustomResourceDefinition";
  /** The CRD's name: `<plural>.<group>`. */
  metadata: { name: string };
  /** Group, scope, names and the one version with its schema. */
  spec: {
    group: string;
    scope: "Namespaced" | "Cluster";
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames?: string[];
      categories?: string[];
    };
    versions: Array<{
      name: string;
      served: boolean;
      storage: boolean;
      subresources: { status: Record<string, never> };
      additionalPrinterColumns?: Array<Record<string, unknown>>;
      schema: { openAPIV3Schema: SchemaProps };
    }>;
  };
}

/**
 * True when `value` is a Resource made by `defineResource` (a ResourceType carrying its definition), as
 * `operator-hub crd` tells a module's resources from its other exports.
 *
 * @example
 * ```ts
 * import { isResource } from "../../resources.ts";
 * import * as module from "../../examples/website_resource.ts";
 *
 * const resources = Object.values(module).filter(isResource); // [Website]
 * ```
 */
export function isResource(value: unknown): value is Resource {
  if (value === null || typeof value !== "object") return false;
  const d = (value as { definition?: unknown }).definition as Record<string, unknown> | undefined;
  return d !== null && typeof d === "object" && typeof d.group === "string" && typeof d.kind === "string" &&
    typeof d.plural === "string" && typeof d.version === "string" && d.spec !== null && typeof d.spec === "object";
}

/**
 * The CustomResourceDefinition of `resource`: one served and stored version, its structural schema, the status
 * subresource, printer columns, short names and categories.
 *
 * Guarantees:
 * - the schema is {@link structuralSchema} of the definition's spec and status; `spec` is required when its schema
 *   requires a field (as the object's TypeScript type says);
 * - the status schema always holds the SDK's own bookkeeping field (`status.handlers`, free-form), whether or not the
 *   definition has a status; a status of the definition's own with a field of that name is refused;
 * - a schema that cannot be made structural throws a ResourceDefinitionError naming the kind and the field path;
 * - the same definition gives the same document, key for key (the checked-in CRDs are compared with it).
 *
 * @example
 * ```ts
 * import Type from "typebox";
 * import { crdOf, defineResource } from "../../resources.ts";
 *
 * const Website = defineResource({
 *   group: "examples.operator-hub.dev",
 *   version: "v1",
 *   kind: "Website",
 *   plural: "websites",
 *   spec: Type.Object({ image: Type.String({ minLength: 1 }) }),
 * });
 * const crd = crdOf(Website);
 * console.log(crd.metadata.name); // websites.examples.operator-hub.dev
 * ```
 */
export function crdOf(resource: Resource): CrdDocument {
  const d = resource.definition;
  const name = `${d.plural}.${d.group}`;
  let spec: SchemaProps;
  let status: SchemaProps;
  try {
    spec = structuralSchema(d.spec, "spec");
    status = structuralSchema(d.status ?? { type: "object" }, "status");
  } catch (err) {
    if (!(err instanceof StructuralSchemaError)) throw err;
    throw new ResourceDefinitionError(`cannot make the CRD of ${d.kind} (${name}): ${err.path}: ${err.reason}`, {
      cause: err,
    });
  }
  const own = (status.properties ?? {}) as Record<string, SchemaProps>;
  if (SDK_STATUS_FIELD in own) {
    throw new ResourceDefinitionError(
      `cannot make the CRD of ${d.kind} (${name}): status.${SDK_STATUS_FIELD}: the SDK keeps its handlers' ` +
        "progress there; name the field otherwise",
    );
  }
  if (status.additionalProperties !== undefined) {
    throw new ResourceDefinitionError(
      `cannot make the CRD of ${d.kind} (${name}): status: a record (additionalProperties) leaves no room for ` +
        `the SDK's status.${SDK_STATUS_FIELD}; use Type.Object`,
    );
  }
  const { properties: _, ...statusRest } = status;
  const root: SchemaProps = {
    ...(d.description ? { description: d.description } : {}),
    type: "object",
    ...((spec.required as string[] | undefined)?.length ? { required: ["spec"] } : {}),
    properties: { spec, status: { ...statusRest, properties: { ...own, ...SDK_STATUS } } },
  };
  const columns = (d.printerColumns ?? []).map((c) => ({
    name: c.name,
    type: c.type,
    jsonPath: c.jsonPath,
    ...(c.description !== undefined ? { description: c.description } : {}),
    ...(c.priority !== undefined ? { priority: c.priority } : {}),
    ...(c.format !== undefined ? { format: c.format } : {}),
  }));
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name },
    spec: {
      group: d.group,
      scope: d.scope ?? "Namespaced",
      names: {
        kind: d.kind,
        listKind: `${d.kind}List`,
        plural: d.plural,
        singular: d.singular ?? d.kind.toLowerCase(),
        ...(d.shortNames?.length ? { shortNames: [...d.shortNames] } : {}),
        ...(d.categories?.length ? { categories: [...d.categories] } : {}),
      },
      versions: [{
        name: d.version,
        served: true,
        storage: true,
        subresources: { status: {} },
        ...(columns.length ? { additionalPrinterColumns: columns } : {}),
        schema: { openAPIV3Schema: root },
      }],
    },
  };
}
