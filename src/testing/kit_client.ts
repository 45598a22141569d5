// The test kit's admin client of one cluster for one resource: get, list, create, patch, delete and apply, typed by
// the resource (`kinds.ConfigMap`, a `defineResource` result), straight to the apiserver (never through a fault).

import type { KubeClient, ResourceType } from "../kube/mod.ts";
import { apiVersionOf, resourcePath } from "../kube/paths.ts";

/**
 * The objects of a resource type: its `"~object"` type when it carries one, else any Kubernetes object.
 *
 * @example
 * ```ts
 * import type { KitObjectOf, TestEnv } from "../../testing.ts";
 * import { Website } from "../../examples/website_resource.ts";
 *
 * declare const env: TestEnv;
 * type WebsiteObject = KitObjectOf<typeof Website>; // the Website's own type, spec.image and all
 * const site: WebsiteObject | undefined = await env.client("west", Website).find({ namespace: "shop", name: "w" });
 * console.log(site?.spec.image);
 * ```
 */
export type KitObjectOf<R> = R extends ResourceType<infer T> ? unknown extends T ? KitObject : T : KitObject;

/**
 * A Kubernetes object as the apiserver returns it (when its resource carries no type).
 *
 * @example
 * ```ts
 * import type { KitObject, TestEnv } from "../../testing.ts";
 * import type { ResourceType } from "../../kube.ts";
 *
 * declare const env: TestEnv;
 * const leases: ResourceType = { group: "coordination.k8s.io", version: "v1", kind: "Lease", plural: "leases" };
 * const all: KitObject[] = await env.client("east", leases).list({ namespace: "kube-system" });
 * console.log(all.map((lease) => lease.metadata.name));
 * ```
 */
export interface KitObject {
  /** `group/version`. */
  apiVersion?: string;
  /** The kind. */
  kind?: string;
  /** Name, namespace, uid, resourceVersion, labels and the rest. */
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string; [field: string]: unknown };
  /** spec, status, data and any other field. */
  [field: string]: unknown;
}

/**
 * Which object: its namespace (for a namespaced resource) and name.
 *
 * @example
 * ```ts
 * import type { KitRef, TestEnv } from "../../testing.ts";
 * import { kinds } from "../../mod.ts";
 *
 * declare const env: TestEnv;
 * const ref: KitRef = { namespace: "shop", name: "site" };
 * await env.client("west", kinds.ConfigMap).delete(ref); // a missing object is not an error
 * console.log(await env.client("west", kinds.ConfigMap).find(ref)); // undefined
 * ```
 */
export interface KitRef {
  /** The namespace; required for a namespaced resource. */
  namespace?: string;
  /** The name. */
  name: string;
}

/**
 * An object to create or apply: at least a name (and a namespace for a namespaced resource).
 *
 * @example
 * ```ts
 * import type { KitNewObject, TestEnv } from "../../testing.ts";
 * import { kinds } from "../../mod.ts";
 *
 * declare const env: TestEnv;
 * const source: KitNewObject = { metadata: { name: "site", namespace: "shop" }, data: { "index.html": "<h1>hi</h1>" } };
 * const created = await env.client("east", kinds.ConfigMap).create(source); // apiVersion and kind filled in
 * console.log(created.metadata.uid);
 * ```
 */
export interface KitNewObject {
  /** At least a name, and a namespace for a namespaced resource. */
  metadata: { name: string; namespace?: string; [field: string]: unknown };
  /** spec, data or any other field. */
  [field: string]: unknown;
}

/**
 * A typed admin client of one resource in one test cluster (see `TestEnv.client`).
 *
 * @example
 * ```ts
 * import type { KitClient, TestEnv } from "../../testing.ts";
 * import { kinds } from "../../mod.ts";
 *
 * declare const env: TestEnv;
 * async function label(client: KitClient<{ metadata: { name: string } }>, namespace: string): Promise<void> {
 *   for (const obj of await client.list({ namespace })) {
 *     await client.patch({ namespace, name: obj.metadata.name }, { metadata: { labels: { seen: "yes" } } });
 *   }
 * }
 * await label(env.client("west", kinds.ConfigMap), "shop");
 * ```
 */
export interface KitClient<T> {
  /** The object; rejects with a 404 ApiError (`isNotFound`) when it does not exist. */
  get(ref: KitRef): Promise<T>;
  /** The object, or undefined when it does not exist (handy inside `eventually`). */
  find(ref: KitRef): Promise<T | undefined>;
  /** Every object (in `namespace` when given), following list pages. */
  list(options?: { namespace?: string; labelSelector?: string }): Promise<T[]>;
  /** Creates the object; apiVersion and kind are filled in. */
  create(object: KitNewObject): Promise<T>;
  /** A JSON merge patch (or a `json` / `strategic` one); `subresource: "status"` patches the status. */
  patch(
    ref: KitRef,
    patch: unknown,
    options?: { type?: "merge" | "json" | "strategic"; subresource?: "status" },
  ): Promise<T>;
  /** Deletes the object (background propagation); a missing object is not an error. */
  delete(ref: KitRef): Promise<void>;
  /** Server-side apply as `fieldManager` (default "operator-hub-testing"), forcing conflicts. */
  apply(object: KitNewObject, options?: { fieldManager?: string }): Promise<T>;
}

const PATCH_TYPES = {
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  strategic: "application/strategic-merge-patch+json",
};

/** A {@linkcode KitClient} of `type` over `kube`. */
export function kitClient<R extends ResourceType>(kube: KubeClient, type: R): KitClient<KitObjectOf<R>> {
  type T = KitObjectOf<R>;
  const namespaced = type.namespaced ?? true;
  const path = (ref: Partial<KitRef>, subresource?: string) => {
    if (namespaced && ref.name && !ref.namespace) {
      throw new TypeError(`${type.kind} ${ref.name}: a namespaced resource needs a namespace`);
    }
    return resourcePath({ ...type, namespace: namespaced ? ref.namespace : undefined, name: ref.name, subresource });
  };
  const full = (object: KitNewObject) => ({ apiVersion: apiVersionOf(type), kind: type.kind, ...object });
  const client: KitClient<T> = {
    get: (ref) => kube.request<T>("GET", path(ref)),
    async find(ref) {
      try {
        return await kube.request<T>("GET", path(ref));
      } catch (error) {
        if ((error as { status?: number }).status === 404) return undefined;
        throw error;
      }
    },
    async list(options = {}) {
      const items: T[] = [];
      let next: string | undefined;
      do {
        const page = await kube.listPage<T>(path({ namespace: options.namespace }), {
          labelSelector: options.labelSelector,
          continueToken: next,
        });
        items.push(...page.items);
        next = page.continueToken;
      } while (next);
      return items;
    },
    create: (object) => kube.request<T>("POST", path({ namespace: object.metadata.namespace }), { body: full(object) }),
    patch: (ref, body, options = {}) =>
      kube.request<T>("PATCH", path(ref, options.subresource), {
        body,
        contentType: PATCH_TYPES[options.type ?? "merge"],
      }),
    async delete(ref) {
      try {
        await kube.request("DELETE", path(ref), { query: { propagationPolicy: "Background" }, discardBody: true });
      } catch (error) {
        if ((error as { status?: number }).status !== 404) throw error;
      }
    },
    apply: (object, options = {}) =>
      kube.request<T>("PATCH", path(object.metadata), {
        body: JSON.stringify(full(object)),
        contentType: "application/apply-patch+yaml",
        query: { fieldManager: options.fieldManager ?? "operator-hub-testing", force: true },
      }),
  };
  return client;
}
