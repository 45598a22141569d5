// A TypeBox (JSON Schema) schema made into the structural schema an apiextensions.k8s.io/v1 CRD's openAPIV3Schema holds.

import { isRecord } from "../util/mod.ts";
import { ResourceDefinitionError } from "./define_resource.ts";

/**
 * A JSON Schema node as the CRD carries it (apiextensions.k8s.io/v1 JSONSchemaProps).
 *
 * @example
 * ```ts
 * import { crdOf, type SchemaProps } from "../../resources.ts";
 * import { Website } from "../../examples/website_resource.ts";
 *
 * const root: SchemaProps = crdOf(Website).spec.versions[0].schema.openAPIV3Schema;
 * const spec = (root.properties as Record<string, SchemaProps>).spec;
 * console.log(spec.required); // [ "image" ]
 * ```
 */
export type SchemaProps = Record<string, unknown>;

/** How deep a schema may nest before it is refused (a CRD's own nesting limit is far below a recursion's). */
export const MAX_SCHEMA_DEPTH = 64;

/** Keywords copied as they are (JSONSchemaProps fields the apiserver accepts on any structural node). */
const COPIED = new Set(
  ("description title format default enum nullable example externalDocs minLength maxLength pattern " +
    "minimum maximum multipleOf minItems maxItems minProperties maxProperties " +
    "x-kubernetes-int-or-string x-kubernetes-embedded-resource x-kubernetes-list-type " +
    "x-kubernetes-list-map-keys x-kubernetes-map-type x-kubernetes-validations").split(" "),
);

/** Annotations of JSON Schema (or TypeBox) the CRD has no field for and that constrain nothing: dropped. */
const DROPPED = new Set(
  ("$id $schema $comment examples readOnly writeOnly deprecated contentEncoding contentMediaType").split(" "),
);

/** Keywords handled by the conversion itself. */
const HANDLED = new Set(
  ("type const properties required additionalProperties patternProperties items uniqueItems " +
    "exclusiveMinimum exclusiveMaximum anyOf allOf x-kubernetes-preserve-unknown-fields").split(" "),
);

/** Why a keyword cannot be made structural, and what to write instead. */
const REFUSED: Record<string, string> = {
  $ref: "references (Type.Ref, Type.Cyclic) cannot be expanded in a CRD: write the schema inline",
  $defs: "definitions (Type.Module, Type.Cyclic) cannot be expanded in a CRD: write the schema inline",
  definitions: "definitions cannot be expanded in a CRD: write the schema inline",
  oneOf: "oneOf is not structural: use one object with optional fields",
  not: "not is not structural: use a CEL rule (x-kubernetes-validations)",
  if: "if/then/else is not structural: use a CEL rule (x-kubernetes-validations)",
  then: "if/then/else is not structural: use a CEL rule (x-kubernetes-validations)",
  else: "if/then/else is not structural: use a CEL rule (x-kubernetes-validations)",
  additionalItems: "tuples (Type.Tuple) are not structural: use an object, or an array of one item type",
  prefixItems: "tuples (Type.Tuple) are not structural: use an object, or an array of one item type",
  contains: "contains is not structural: use a CEL rule (x-kubernetes-validations)",
  propertyNames: "propertyNames is not structural: use a CEL rule (x-kubernetes-validations)",
  dependencies: "dependencies are not structural: use a CEL rule (x-kubernetes-validations)",
  dependentRequired: "dependentRequired is not structural: use a CEL rule (x-kubernetes-validations)",
  dependentSchemas: "dependentSchemas is not structural: use a CEL rule (x-kubernetes-validations)",
  unevaluatedProperties: "unevaluatedProperties is not structural: use Type.Object's properties",
  unevaluatedItems: "unevaluatedItems is not structural",
};

const SCALARS = new Set(["string", "integer", "number", "boolean"]);

/**
 * The structural schema of `schema` (a TypeBox schema, i.e. JSON Schema), for the field at `path` (e.g. `spec`).
 *
 * Guarantees:
 * - every node has a `type`, or `x-kubernetes-int-or-string`, or `x-kubernetes-preserve-unknown-fields: true`;
 * - `Type.Union([Type.Integer(), Type.String()])` becomes `x-kubernetes-int-or-string: true`; a union with
 *   `Type.Null()` becomes `nullable: true`; a union of literals and a `const` become an `enum`;
 *   `Type.Intersect` of objects becomes one object;
 * - `Type.Unknown()` / `Type.Any()` (no type) and `additionalProperties: true` become
 *   `x-kubernetes-preserve-unknown-fields: true`; `Type.Record(Type.String(), V)` becomes `additionalProperties: V`;
 *   `additionalProperties: false` is dropped (the apiserver prunes unknown fields by itself);
 * - the numeric `exclusiveMinimum`/`exclusiveMaximum` of JSON Schema become OpenAPI v3.0's boolean forms;
 *   `uniqueItems: true` on scalars becomes `x-kubernetes-list-type: set`;
 * - `default`, `x-kubernetes-*` markers and CEL rules (`x-kubernetes-validations`) pass through;
 *   `$id`, `$schema` and other annotations are dropped;
 * - anything that cannot be made structural throws a StructuralSchemaError naming the field path and the keyword;
 * - keys come in one fixed order (description, type, ..., properties, items, markers), so the YAML is stable.
 *
 * The input is never modified.
 */
export function structuralSchema(schema: unknown, path: string): SchemaProps {
  return convert(schema, path, 0);
}

/**
 * A schema that cannot be made structural: `path` is the field (e.g. `spec.ports[*].port`), `reason` why. `crdOf`
 * throws it wrapped in a ResourceDefinitionError naming the kind (this error is the `cause`).
 *
 * @example
 * ```ts
 * import Type from "typebox";
 * import { crdOf, defineResource, StructuralSchemaError } from "../../resources.ts";
 *
 * const Pair = defineResource({
 *   group: "examples.operator-hub.dev",
 *   version: "v1",
 *   kind: "Pair",
 *   plural: "pairs",
 *   spec: Type.Object({ pair: Type.Tuple([Type.String(), Type.Number()]) }),
 * });
 * try {
 *   crdOf(Pair);
 * } catch (err) {
 *   const cause = (err as Error).cause;
 *   if (cause instanceof StructuralSchemaError) console.log(cause.path); // spec.pair
 * }
 * ```
 */
export class StructuralSchemaError extends ResourceDefinitionError {
  /** Always `StructuralSchemaError`. */
  override name = "StructuralSchemaError";
  /** The field path and why it cannot be made structural. */
  constructor(readonly path: string, readonly reason: string) {
    super(`cannot make a structural schema of ${path}: ${reason}`);
  }
}

function refuse(path: string, why: string): never {
  throw new StructuralSchemaError(path, why);
}

function convert(input: unknown, path: string, depth: number): SchemaProps {
  if (depth > MAX_SCHEMA_DEPTH) refuse(path, `nested deeper than ${MAX_SCHEMA_DEPTH} levels`);
  if (!isRecord(input)) refuse(path, `not a schema object (${JSON.stringify(input)?.slice(0, 60)})`);
  const s = input;
  for (const k of Object.keys(s)) {
    if (k in REFUSED) refuse(path, REFUSED[k]);
    if (!COPIED.has(k) && !DROPPED.has(k) && !HANDLED.has(k) && !k.startsWith("~")) {
      refuse(path, `keyword "${k}" has no place in a CRD schema (apiextensions.k8s.io/v1 JSONSchemaProps)`);
    }
  }
  // The node's own keywords (description, default, ...), laid over what its union or intersection gives.
  let out: SchemaProps = {};
  if (Array.isArray(s.anyOf)) out = union(s.anyOf, path, depth);
  else if (s.anyOf !== undefined) refuse(path, "anyOf must be a list");
  if (Array.isArray(s.allOf)) out = intersection(s.allOf, path, depth);
  else if (s.allOf !== undefined) refuse(path, "allOf must be a list");
  for (const k of Object.keys(s)) if (COPIED.has(k)) out[k] = s[k];
  if (s.const !== undefined) out.enum = [s.const];
  if (s["x-kubernetes-preserve-unknown-fields"] === true) out["x-kubernetes-preserve-unknown-fields"] = true;
  typeOf(s, out, path);
  if (out.type === "object") objectNode(s, out, path, depth);
  else if (s.properties !== undefined || s.additionalProperties !== undefined || s.patternProperties !== undefined) {
    refuse(path, `properties on a ${out.type ?? "typeless"} field`);
  }
  if (out.type === "array") arrayNode(s, out, path, depth);
  else if (s.items !== undefined) refuse(path, `items on a ${out.type ?? "typeless"} field`);
  exclusive(s, out, "exclusiveMinimum", "minimum", Math.max);
  exclusive(s, out, "exclusiveMaximum", "maximum", Math.min);
  checkMarkers(out, path);
  if (out.type === undefined && out["x-kubernetes-int-or-string"] !== true) {
    // Type.Unknown(), Type.Any(): any JSON value, kept as it is.
    out["x-kubernetes-preserve-unknown-fields"] = true;
  }
  return ordered(out);
}

const KEY_ORDER = (
  "description title type format nullable enum default minimum exclusiveMinimum maximum " +
  "exclusiveMaximum multipleOf minLength maxLength pattern minItems maxItems minProperties " +
  "maxProperties required properties additionalProperties items"
).split(" ");

/** The node with its keys in KEY_ORDER, then the x-kubernetes-* markers and the rest in name order. */
function ordered(node: SchemaProps): SchemaProps {
  const rank = (k: string) => {
    const i = KEY_ORDER.indexOf(k);
    return i >= 0 ? i : KEY_ORDER.length;
  };
  const keys = Object.keys(node).sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(keys.map((k) => [k, node[k]]));
}

/** Sets `out.type` from `type`, `const`, `enum` or `properties`; a `null` in a type list becomes `nullable`. */
function typeOf(s: Record<string, unknown>, out: SchemaProps, path: string): void {
  let type = s.type;
  if (Array.isArray(type)) {
    const rest = type.filter((t) => t !== "null");
    if (rest.length < type.length) out.nullable = true;
    if (rest.length === 2 && rest.includes("integer") && rest.includes("string")) {
      out["x-kubernetes-int-or-string"] = true;
      return;
    }
    if (rest.length !== 1) refuse(path, `a field of several types (${type.join(", ")}) is not structural`);
    type = rest[0];
  }
  if (type === undefined) {
    if (out.type !== undefined) return; // from a union or intersection
    const values = Array.isArray(out.enum) ? out.enum : undefined;
    if (values) type = enumType(values, out, path);
    else if (isRecord(s.properties)) type = "object";
    else return;
  }
  if (type === "null") refuse(path, "a field that can only be null (Type.Null) is not structural");
  if (typeof type !== "string" || !(SCALARS.has(type) || type === "object" || type === "array")) {
    refuse(path, `type ${JSON.stringify(type)} cannot be stored in a Kubernetes object`);
  }
  if (out.type !== undefined && out.type !== type) refuse(path, `type ${type} contradicts its union's ${out.type}`);
  out.type = type;
}

/** The one type of an enum's values (a `null` among them becomes `nullable`). */
function enumType(values: unknown[], out: SchemaProps, path: string): string {
  const kinds = new Set<string>();
  for (const v of values) {
    if (v === null) out.nullable = true;
    else if (typeof v === "number") kinds.add(Number.isInteger(v) ? "integer" : "number");
    else kinds.add(typeof v);
  }
  if (kinds.has("integer") && kinds.has("number")) kinds.delete("integer");
  const [only] = kinds;
  if (kinds.size !== 1 || !SCALARS.has(only)) {
    refuse(path, `an enum of mixed or non-scalar values (${JSON.stringify(values).slice(0, 80)}) is not structural`);
  }
  return only;
}

function objectNode(s: Record<string, unknown>, out: SchemaProps, path: string, depth: number): void {
  const properties: Record<string, SchemaProps> = isRecord(out.properties) ? { ...out.properties } as never : {};
  if (s.properties !== undefined && !isRecord(s.properties)) refuse(path, "properties must be an object");
  for (const [name, sub] of Object.entries(s.properties ?? {})) {
    properties[name] = convert(sub, `${path}.${name}`, depth + 1);
  }
  let additional = s.additionalProperties;
  if (s.patternProperties !== undefined) {
    const entries = isRecord(s.patternProperties) ? Object.entries(s.patternProperties) : [];
    const [pattern, value] = entries[0] ?? [];
    if (entries.length !== 1 || !["^.*$", "^(.*)$", ".*", "^.+$"].includes(pattern)) {
      refuse(
        path,
        `patternProperties ${JSON.stringify(s.patternProperties).slice(0, 80)} is not structural: ` +
          "use Type.Record(Type.String(), V), and a CEL rule on the keys",
      );
    }
    if (additional !== undefined && additional !== false) {
      refuse(path, "both patternProperties and additionalProperties");
    }
    additional = value;
  }
  const required = [...new Set([...(out.required as string[] ?? []), ...(s.required as string[] ?? [])])];
  if (s.required !== undefined && (!Array.isArray(s.required) || s.required.some((r) => typeof r !== "string"))) {
    refuse(path, "required must be a list of field names");
  }
  if (additional === true) out["x-kubernetes-preserve-unknown-fields"] = true;
  else if (isRecord(additional)) {
    if (Object.keys(properties).length) {
      refuse(path, "both properties and additionalProperties (a record): the apiserver takes one or the other");
    }
    out.additionalProperties = convert(additional, `${path}.*`, depth + 1);
  } else if (additional !== undefined && additional !== false) refuse(path, "additionalProperties must be a schema");
  delete out.properties;
  delete out.required;
  if (required.length) out.required = required;
  if (Object.keys(properties).length) out.properties = properties;
}

function arrayNode(s: Record<string, unknown>, out: SchemaProps, path: string, depth: number): void {
  if (Array.isArray(s.items)) {
    refuse(path, "tuples (Type.Tuple) are not structural: use an object, or an array of one item type");
  }
  if (s.items === undefined && out.items === undefined) refuse(path, "an array needs the schema of its items");
  if (s.items !== undefined) out.items = convert(s.items, `${path}[*]`, depth + 1);
  if (s.uniqueItems === true) {
    const itemType = (out.items as SchemaProps).type as string;
    const listType = out["x-kubernetes-list-type"];
    if (!SCALARS.has(itemType) || (listType !== undefined && listType !== "set")) {
      refuse(
        path,
        "uniqueItems is refused by the apiserver (quadratic): use x-kubernetes-list-type set (scalars) or map",
      );
    }
    out["x-kubernetes-list-type"] = "set";
  }
}

/** JSON Schema's numeric `exclusiveMinimum: n` as OpenAPI v3.0's `minimum: n, exclusiveMinimum: true`. */
function exclusive(
  s: Record<string, unknown>,
  out: SchemaProps,
  key: "exclusiveMinimum" | "exclusiveMaximum",
  bound: "minimum" | "maximum",
  stricter: (a: number, b: number) => number,
): void {
  const v = s[key];
  if (v === undefined || v === false) return;
  if (v === true) {
    out[key] = true;
    return;
  }
  if (typeof v !== "number") return;
  const b = out[bound];
  if (typeof b === "number" && stricter(b, v) === b && b !== v) return; // the inclusive bound is the stricter one
  out[bound] = v;
  out[key] = true;
}

/** The x-kubernetes-* markers' shapes, checked here so that the error names the field, not the apiserver's index. */
function checkMarkers(out: SchemaProps, path: string): void {
  const rules = out["x-kubernetes-validations"];
  if (rules !== undefined) {
    if (!Array.isArray(rules) || rules.some((r) => !isRecord(r) || typeof r.rule !== "string")) {
      refuse(path, "x-kubernetes-validations must be a list of { rule: string, message?: string }");
    }
  }
  const listType = out["x-kubernetes-list-type"];
  if (listType !== undefined) {
    if (out.type !== "array") refuse(path, "x-kubernetes-list-type on a field that is not an array");
    if (!["atomic", "set", "map"].includes(listType as string)) {
      refuse(path, `x-kubernetes-list-type ${JSON.stringify(listType)} is not atomic, set or map`);
    }
  }
  const keys = out["x-kubernetes-list-map-keys"];
  if (keys !== undefined && (listType !== "map" || !Array.isArray(keys) || keys.length === 0)) {
    refuse(path, "x-kubernetes-list-map-keys needs x-kubernetes-list-type map and a list of item fields");
  }
  const mapType = out["x-kubernetes-map-type"];
  if (mapType !== undefined && (out.type !== "object" || !["atomic", "granular"].includes(mapType as string))) {
    refuse(path, "x-kubernetes-map-type must be atomic or granular, on an object");
  }
  for (const k of ["x-kubernetes-int-or-string", "x-kubernetes-embedded-resource"]) {
    if (out[k] === false) delete out[k];
    else if (out[k] !== undefined && out[k] !== true) refuse(path, `${k} must be true`);
  }
  if (out["x-kubernetes-int-or-string"] === true) {
    if (out.type !== undefined) refuse(path, `x-kubernetes-int-or-string on a field of type ${out.type}`);
  }
}

/** `anyOf`: nulls become `nullable`; integer|string becomes int-or-string; literals become an enum; one member is it. */
function union(members: unknown[], path: string, depth: number): SchemaProps {
  if (!members.every(isRecord)) refuse(path, "anyOf members must be schemas");
  const rest = members.filter((m) => m.type !== "null");
  const out: SchemaProps = rest.length < members.length ? { nullable: true } : {};
  if (rest.length === 0) refuse(path, "a field that can only be null (Type.Null) is not structural");
  const plain = (m: Record<string, unknown>) => Object.keys(m).every((k) => k === "type" || k.startsWith("~"));
  const types = new Set(rest.map((m) => m.type));
  if (rest.length === 2 && types.has("integer") && types.has("string")) {
    if (!rest.every(plain)) {
      refuse(path, "the members of an int-or-string union cannot carry constraints: put them on the union");
    }
    return { ...out, "x-kubernetes-int-or-string": true };
  }
  if (rest.every((m) => m.const !== undefined || Array.isArray(m.enum))) {
    const values = rest.flatMap((m) => m.const !== undefined ? [m.const] : m.enum as unknown[]);
    return { ...out, type: enumType(values, out, path), enum: values };
  }
  if (rest.length === 1) return { ...convert(rest[0], path, depth + 1), ...out };
  return refuse(
    path,
    `a union of ${rest.map((m) => m.type ?? "schema").join(" | ")} is not structural: ` +
      "use one object with optional fields, Type.Union([Type.Integer(), Type.String()]), or Type.Unknown()",
  );
}

/** `allOf` of objects (Type.Intersect): one object with every member's properties and required fields. */
function intersection(members: unknown[], path: string, depth: number): SchemaProps {
  const properties: Record<string, SchemaProps> = {};
  const required = new Set<string>();
  for (const m of members) {
    const c = convert(m, path, depth + 1);
    if (c.type !== "object" || c.additionalProperties !== undefined) {
      refuse(path, "an intersection (allOf) is structural only of objects with properties");
    }
    for (const [name, sub] of Object.entries((c.properties ?? {}) as Record<string, SchemaProps>)) {
      if (name in properties && JSON.stringify(properties[name]) !== JSON.stringify(sub)) {
        refuse(`${path}.${name}`, "the intersection's members give this field different schemas");
      }
      properties[name] = sub;
    }
    for (const r of (c.required ?? []) as string[]) required.add(r);
  }
  return { type: "object", properties, ...(required.size ? { required: [...required] } : {}) };
}
