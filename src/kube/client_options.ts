// What a KubeClient is built with (KubeClientOptions) and what its requests take and give: options, list pages,
// watch options, the size cap and the metadata-only Accept headers.

import type { Clock, Logger } from "../util/mod.ts";
import type { QueryValue } from "./wire/_request_target.ts";
import type { FetchLike } from "./wire/_transport.ts";

/**
 * One finished request, for metrics. `code` is the HTTP status, or "error" when none arrived.
 *
 * @example
 * ```ts
 * import { type ClusterAccess, KubeClient, type ResponseInfo } from "../../kube.ts";
 *
 * declare const access: ClusterAccess;
 * const counts = new Map<string, number>();
 * function count(info: ResponseInfo): void {
 *   const key = `${info.method} ${info.code}`;
 *   counts.set(key, (counts.get(key) ?? 0) + 1);
 * }
 * const client = new KubeClient(access, { onResponse: count });
 * ```
 */
export interface ResponseInfo {
  /** The request's HTTP method. */
  method: string;
  /** The HTTP status, or "error" when none arrived. */
  code: number | "error";
  /** From sending the request to its answer's headers (a watch) or body (anything else), ms. */
  durationMs: number;
}

/**
 * How a KubeClient talks to its cluster; every field is optional.
 *
 * @example
 * ```ts
 * import { type ClusterAccess, KubeClient, type KubeClientOptions } from "../../kube.ts";
 *
 * declare const access: ClusterAccess;
 * const options: KubeClientOptions = {
 *   requestTimeoutMs: 10_000,
 *   userAgent: "my-tool/1.0",
 *   onResponse: ({ method, code, durationMs }) => console.log(method, code, durationMs),
 * };
 * const client = new KubeClient(access, options);
 * ```
 */
export interface KubeClientOptions {
  /**
   * Sends every request through this fetch. Default: the client's own HTTP/1.1 keep-alive sockets
   * (src/kube/wire/_http1.ts) for writes, with watches and reads as streams of one HTTP/2 connection
   * (src/kube/wire/_h2_streams.ts); Deno's fetch for --http2 and a proxy; node:https for insecure-skip-tls-verify.
   */
  fetch?: FetchLike;
  /** Time source, for tests on virtual time. Default the system clock. */
  clock?: Clock;
  /** Deadline for a non-watch request, body included; for a watch, until its headers arrive. Default 30 s. */
  requestTimeoutMs?: number;
  /** Default `uuid-operator-hub (deno)`. */
  userAgent?: string;
  /** Told of every finished request (for metrics); must not throw. */
  onResponse?(info: ResponseInfo): void;
  /** Receives one debug line per request (method, path, code, duration); never headers. */
  logger?: Logger;
  /** How long credentials from `access.auth()` are reused. Default 1 s. A 401 drops them at once. */
  authTtlMs?: number;
  /**
   * Send everything through Deno's fetch offering HTTP/2 (ALPN). Default false: measured on the local apiservers
   * (`deno task bench`), HTTP/1.1 on our own sockets costs the hub about half the CPU per status write, while the
   * watches are multiplexed where that pays (`multiplex`).
   */
  http2?: boolean;
  /**
   * Watches, reads and pre-flight reviews as streams of the client's one HTTP/2 connection (node:http2), so a cluster
   * holds one connection whatever the number of its watches; writes stay on HTTP/1.1. `true`, `false`, or "auto"
   * (default): from the process's 33rd such client on (MULTIPLEX_FROM), for good. Below that, each watch holds a
   * connection of our own, which costs less CPU per event and, with node:http2 never loaded, less memory in all.
   */
  multiplex?: boolean | "auto";
  /**
   * The largest response body or watch event the client holds, in bytes. Default DEFAULT_MAX_OBJECT_BYTES. A larger
   * one is refused with TooLargeError as soon as it is known to be larger (its Content-Length, else byte
   * `maxObjectBytes + 1`), and its connection closed: a server cannot make the client buffer more than this at once
   * per request. A list page counts whole, so a caller that meets TooLargeError on a page asks for a smaller one.
   */
  maxObjectBytes?: number;
}

/**
 * The default cap on one response body or watch event: 4 MiB.
 *
 * Why: etcd refuses writes over 1.5 MiB (`--max-request-bytes`), so no stored object is larger; its JSON on the wire
 * can be larger than what etcd holds (built-in objects are stored as protobuf, and a Secret's bytes become base64,
 * 4/3 as long: at most 2 MiB), plus the watch event's envelope. 4 MiB is twice that worst case, and a quarter of
 * client-go's 16 MiB per-frame cap in its streaming decoder (raised from 1 MiB in kubernetes#72053 for exactly this
 * protobuf-to-JSON growth). A list page of 500 objects fits as long as they average under 8 KiB.
 *
 * @example
 * ```ts
 * import { type ClusterAccess, DEFAULT_MAX_OBJECT_BYTES, KubeClient } from "../../kube.ts";
 *
 * declare const access: ClusterAccess;
 * // A cluster known to hold unusually large objects: twice the default cap.
 * const client = new KubeClient(access, { maxObjectBytes: 2 * DEFAULT_MAX_OBJECT_BYTES });
 * ```
 */
export const DEFAULT_MAX_OBJECT_BYTES = 4 * 1024 * 1024;

/**
 * The Accept header of a metadata-only list (client-go's metadata client, kube-rs's `list_metadata`): the server
 * answers a PartialObjectMetadataList (apiVersion meta.k8s.io/v1) whose items hold only `metadata`. The trailing
 * `application/json` lets a server without the feature answer the full list instead.
 */
export const PARTIAL_METADATA_LIST_ACCEPT = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1," +
  "application/json";
/** The Accept header of a metadata-only watch or get: each object is a PartialObjectMetadata (else the full one). */
export const PARTIAL_METADATA_ACCEPT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

/**
 * One request's options.
 *
 * @example
 * ```ts
 * import { type KubeClient, type KubeRequestOptions, resourcePath } from "../../kube.ts";
 *
 * declare const client: KubeClient;
 * const options: KubeRequestOptions = {
 *   body: { metadata: { labels: { tier: "web" } } },
 *   contentType: "application/merge-patch+json",
 *   query: { fieldManager: "my-tool" },
 *   timeoutMs: 5_000,
 * };
 * const web = resourcePath({ group: "", version: "v1", plural: "services", namespace: "shop", name: "web" });
 * await client.request("PATCH", web, options);
 * ```
 */
export interface KubeRequestOptions {
  /** Query parameters; undefined values are left out. */
  query?: Record<string, QueryValue>;
  /** An object is sent as JSON; a string or bytes as they are. */
  body?: unknown;
  /** Default `application/merge-patch+json` for PATCH, `application/json` otherwise. */
  contentType?: string;
  /** Aborts the request; the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /** This request's deadline, ms. Default the client's `requestTimeoutMs`. */
  timeoutMs?: number;
  /** A 2xx body is read and dropped, not parsed; the call resolves to undefined. Errors still parse. */
  discardBody?: boolean;
  /** The Accept header. Default `application/json`. */
  accept?: string;
}

/**
 * One list page's options.
 *
 * @example
 * ```ts
 * import { type KubeClient, type ListPageOptions, resourcePath } from "../../kube.ts";
 *
 * declare const client: KubeClient;
 * const options: ListPageOptions = { limit: 100, labelSelector: "app=web", metadataOnly: true };
 * const pods = resourcePath({ group: "", version: "v1", plural: "pods", namespace: "shop" });
 * const first = await client.listPage(pods, options);
 * if (first.continueToken) await client.listPage(pods, { ...options, continueToken: first.continueToken });
 * ```
 */
export interface ListPageOptions {
  /** Default 500, like client-go's reflector. */
  limit?: number;
  /** The previous page's `continueToken`, for the next page. */
  continueToken?: string;
  /** Only objects with these labels, e.g. `app=web`. */
  labelSelector?: string;
  /** Only objects whose fields match, e.g. `metadata.name=x`. */
  fieldSelector?: string;
  /** Aborts the request. */
  signal?: AbortSignal;
  /**
   * Ask for a PartialObjectMetadataList (PARTIAL_METADATA_LIST_ACCEPT): items with only `metadata`, so no object's
   * data crosses the wire. A server that does not serve it may answer the full list; the page is read the same way.
   */
  metadataOnly?: boolean;
}

/**
 * One page of a list.
 *
 * @example
 * ```ts
 * import type { KubeClient, ListPage } from "../../kube.ts";
 *
 * declare const client: KubeClient;
 * type Named = { metadata: { name: string } };
 * const names: string[] = [];
 * let page: ListPage<Named> | undefined;
 * do {
 *   page = await client.listPage<Named>("/api/v1/configmaps", { continueToken: page?.continueToken });
 *   names.push(...page.items.map((cm) => cm.metadata.name));
 * } while (page.continueToken);
 * console.log(names.length, "ConfigMaps at resourceVersion", page.resourceVersion);
 * ```
 */
export interface ListPage<T = unknown> {
  /** The page's objects. */
  items: T[];
  /** The list's resourceVersion: where a watch continues from. */
  resourceVersion: string;
  /** Present when more pages follow. */
  continueToken?: string;
  /** How many objects the later pages hold, when the server says. */
  remainingItemCount?: number;
}

/**
 * One watch's options.
 *
 * @example
 * ```ts
 * import { type KubeClient, resourcePath, type WatchOptions } from "../../kube.ts";
 *
 * declare const client: KubeClient;
 * declare const resourceVersion: string; // where a list ended
 * const options: WatchOptions = {
 *   resourceVersion,
 *   timeoutSeconds: 300,
 *   labelSelector: "app=web",
 *   signal: AbortSignal.timeout(60_000),
 * };
 * const deployments = resourcePath({ group: "apps", version: "v1", plural: "deployments" });
 * for await (const event of client.watch(deployments, options)) {
 *   console.log(event.type, event.object.metadata?.name);
 * }
 * ```
 */
export interface WatchOptions {
  /** Where to start; omitted means "from now" with synthetic ADDED events for existing objects. */
  resourceVersion?: string;
  /** The server ends the stream after this many seconds. */
  timeoutSeconds: number;
  /** Default true. */
  allowWatchBookmarks?: boolean;
  /** Only objects with these labels, e.g. `app=web`. */
  labelSelector?: string;
  /** Only objects whose fields match, e.g. `metadata.name=x`. */
  fieldSelector?: string;
  /** Ends the watch: the generator returns without an error. */
  signal?: AbortSignal;
  /** Called once when the server accepted the watch (2xx headers), before the first event. */
  onOpen?: () => void;
  /** Each event's object as a PartialObjectMetadata (PARTIAL_METADATA_ACCEPT), or the full one from an older server. */
  metadataOnly?: boolean;
}
