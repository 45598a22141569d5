// The coordination.k8s.io/v1 Lease client shared by leader election and sharding: one place that builds Lease URLs.

import { httpStatusOf } from "../../kube/mod.ts";
import type { ApiClient } from "../../runtime/mod.ts";

/** The Lease's spec, as coordination.k8s.io/v1 stores it. Times are MicroTime strings. */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** A Lease as the API returns it (only the fields the hub reads or writes). */
export interface LeaseObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: LeaseSpec;
}

/** The API group path of Leases. */
export const LEASES_API = "/apis/coordination.k8s.io/v1";

/**
 * Get, create, update and delete of Leases in one namespace.
 *
 * Guarantees: `update` sends the object's resourceVersion, so it fails with 409 when the Lease changed since it was
 * read (optimistic concurrency: two writers never both succeed for one version); `get` answers `undefined` for a
 * Lease that does not exist, and every other failure is thrown unchanged (callers read `httpStatusOf`).
 */
export class LeaseClient {
  readonly api: ApiClient;
  readonly namespace: string;
  /** The collection's path: `.../namespaces/NS/leases`. */
  readonly collection: string;

  constructor(api: ApiClient, namespace: string) {
    this.api = api;
    this.namespace = namespace;
    this.collection = `${LEASES_API}/namespaces/${encodeURIComponent(namespace)}/leases`;
  }

  /** The path of one Lease. */
  path(name: string): string {
    return `${this.collection}/${encodeURIComponent(name)}`;
  }

  /** The Lease, or undefined when it does not exist. */
  async get(name: string, signal?: AbortSignal): Promise<LeaseObject | undefined> {
    try {
      return await this.api.request<LeaseObject>("GET", this.path(name), { signal });
    } catch (err) {
      if (httpStatusOf(err) === 404) return undefined;
      throw err;
    }
  }

  /** Creates a Lease; 409 when one of that name exists. */
  create(
    name: string,
    spec: LeaseSpec,
    meta: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
    signal?: AbortSignal,
  ): Promise<LeaseObject> {
    return this.api.request<LeaseObject>("POST", this.collection, {
      body: {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name, namespace: this.namespace, ...meta },
        spec,
      },
      signal,
    });
  }

  /** Replaces `current`'s spec (and metadata, when given); 409 when it changed since `current` was read. */
  update(
    current: LeaseObject,
    spec: LeaseSpec,
    signal?: AbortSignal,
    metadata?: Partial<LeaseObject["metadata"]>,
  ): Promise<LeaseObject> {
    return this.api.request<LeaseObject>("PUT", this.path(current.metadata.name), {
      body: { ...current, metadata: { ...current.metadata, ...metadata }, spec },
      contentType: "application/json",
      signal,
    });
  }

  /** Deletes a Lease, only at `resourceVersion` when given; a Lease already gone is not an error. */
  async delete(name: string, resourceVersion?: string, signal?: AbortSignal): Promise<void> {
    try {
      await this.api.request("DELETE", this.path(name), {
        body: resourceVersion
          ? { apiVersion: "v1", kind: "DeleteOptions", preconditions: { resourceVersion } }
          : undefined,
        signal,
      });
    } catch (err) {
      if (httpStatusOf(err) !== 404) throw err;
    }
  }
}

/** Kubernetes MicroTime: RFC 3339 with exactly six fractional digits, UTC. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
