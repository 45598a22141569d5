// /status over many clusters: one page of the clusters by name (`?limit=`, `?continue=`, `?cluster=`), always a summary.

import type { HubHealth } from "../hub.ts";

/** Clusters on a page when `?limit=` is not given (client-go's list page size). */
export const STATUS_DEFAULT_LIMIT = 500;
/** The largest `?limit=` accepted. */
export const STATUS_MAX_LIMIT = 5000;
/**
 * The fewest names `notReady`, and each provider's `errors`, may list in /status: a page lists as many as its `limit`,
 * at least this many; the summary counts every one.
 */
export const STATUS_MAX_LISTED = 100;
/** The most `?cluster=` names one request may ask for. */
const MAX_CLUSTER_PARAMS = 100;

/** Thrown for a query /status cannot answer; the server answers 400 with its message. */
export class StatusQueryError extends Error {
  override name = "StatusQueryError";
}

/** Which clusters one /status answer lists. */
export interface StatusQuery {
  /** At most this many clusters, by name. */
  limit: number;
  /** Only names after this one (from the previous page's `continue`). */
  after?: string;
  /** Only these names (`?cluster=NAME`, repeatable), when given. */
  names?: string[];
}

/** Counts over every cluster, whatever the page lists. */
export interface StatusSummary {
  /** Clusters in the health document. */
  clusters: number;
  /** Of them, those listed on this page. */
  listed: number;
  /** Clusters by state. */
  states: Record<string, number>;
  /** Clusters by the provider that registered them (`none`: engaged by the embedder's own code). */
  providers: Record<string, number>;
  /** Clusters that hold readiness back until synced (the command line's, the home cluster's; see /readyz). */
  gatingReadiness: number;
  /** Names holding readiness back now (clusters and providers); `notReady` lists the first STATUS_MAX_LISTED. */
  notReady: number;
}

/** Reads `?limit=`, `?continue=` and `?cluster=`. Throws StatusQueryError naming the parameter and the value seen. */
export function parseStatusQuery(params: URLSearchParams): StatusQuery {
  const raw = params.get("limit");
  let limit = STATUS_DEFAULT_LIMIT;
  if (raw !== null) {
    limit = Number(raw);
    if (!/^\d+$/.test(raw) || limit < 1 || limit > STATUS_MAX_LIMIT) {
      throw new StatusQueryError(
        `invalid limit ${JSON.stringify(raw.slice(0, 40))}: must be a whole number from 1 to ${STATUS_MAX_LIMIT}`,
      );
    }
  }
  const token = params.get("continue");
  const after = token === null || token === "" ? undefined : decodeContinue(token);
  const names = params.getAll("cluster");
  if (names.length > MAX_CLUSTER_PARAMS) {
    throw new StatusQueryError(`too many cluster parameters (${names.length}): at most ${MAX_CLUSTER_PARAMS}`);
  }
  return { limit, ...(after !== undefined ? { after } : {}), ...(names.length ? { names } : {}) };
}

/**
 * One page of the health document.
 *
 * Guarantees:
 * - `clusters` holds at most `limit` entries: the names after `after` (or those of `names`), in name order; when more
 *   follow, `continue` is the token of the next page (the last name listed, encoded), absent on the last page;
 * - every other per-cluster map of the document (`reconcileHistory.clusters`, `admission.clusters`, `shard.clusters`)
 *   keeps only the names of the page's range (after `after`, up to the last name listed, or every later name on the
 *   last page), so walking the pages shows every name of each map once; `notReady` and each provider's `errors` list
 *   at most the page's `limit`, or STATUS_MAX_LISTED if that is more (`errorsOmitted` counts the rest);
 * - `summary` counts every cluster, by state and by provider, whatever the page lists;
 * - each page is read at its own moment (no snapshot across pages): a cluster added meanwhile is listed on a later
 *   page if its name sorts after the cursor, one removed is simply absent.
 */
export function pagedStatus<T extends HubHealth>(doc: T, query: StatusQuery): T & {
  summary: StatusSummary;
  continue?: string;
} {
  const states: Record<string, number> = {};
  const providers: Record<string, number> = {};
  let gating = 0;
  const all = Object.keys(doc.clusters);
  for (const name of all) {
    const c = doc.clusters[name];
    states[c.state] = (states[c.state] ?? 0) + 1;
    const p = c.provider ?? "none";
    providers[p] = (providers[p] ?? 0) + 1;
    if (c.gatesReadiness !== false) gating++;
  }
  const wanted = query.names ? new Set(query.names) : undefined;
  const candidates = (wanted ? all.filter((n) => wanted.has(n)) : all)
    .filter((n) => query.after === undefined || n > query.after)
    .sort(byName);
  const listed = candidates.slice(0, query.limit);
  const more = candidates.length > listed.length;
  const last = listed[listed.length - 1];
  const onPage = new Set(listed);
  const inRange = wanted
    ? (n: string) => onPage.has(n)
    : (n: string) => (query.after === undefined || n > query.after) && (!more || n <= last);
  const clusters: HubHealth["clusters"] = {};
  for (const name of listed) clusters[name] = doc.clusters[name];
  const notReady = doc.notReady ?? [];
  const listCap = Math.max(STATUS_MAX_LISTED, query.limit);
  const out = {
    ...doc,
    clusters,
    ...(doc.notReady ? { notReady: notReady.slice(0, listCap) } : {}),
    summary: {
      clusters: all.length,
      listed: listed.length,
      states,
      providers,
      gatingReadiness: gating,
      notReady: notReady.length,
    },
    ...(more ? { continue: encodeContinue(last) } : {}),
  } as T & { summary: StatusSummary; continue?: string };
  const history = (doc as { reconcileHistory?: { clusters?: Record<string, unknown> } }).reconcileHistory;
  if (history?.clusters) {
    (out as unknown as Record<string, unknown>).reconcileHistory = {
      ...history,
      clusters: only(history.clusters, inRange),
    };
  }
  const admission = doc.admission as { clusters?: unknown } | undefined;
  if (admission?.clusters && typeof admission.clusters === "object") {
    out.admission = { ...admission, clusters: only(admission.clusters as Record<string, unknown>, inRange) };
  }
  if (doc.shard) out.shard = { ...doc.shard, clusters: only(doc.shard.clusters, inRange) };
  if (doc.providers) {
    const capped: NonNullable<HubHealth["providers"]> = {};
    for (const [name, p] of Object.entries(doc.providers)) {
      capped[name] = p.errors.length > listCap
        ? { ...p, errors: p.errors.slice(0, listCap), errorsOmitted: p.errors.length - listCap }
        : p;
    }
    out.providers = capped;
  }
  return out;
}

function only<V>(map: Record<string, V>, keep: (name: string) => boolean): Record<string, V> {
  const out: Record<string, V> = {};
  for (const name in map) if (keep(name)) out[name] = map[name];
  return out;
}

/** Code-unit order, the order `continue` compares in (locale-independent). */
function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function encodeContinue(name: string): string {
  const bytes = new TextEncoder().encode(name);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function decodeContinue(token: string): string {
  if (token.length > 2048 || !/^[A-Za-z0-9_-]+$/.test(token)) {
    throw new StatusQueryError("invalid continue token: pass the `continue` value of the previous page as it is");
  }
  try {
    const bin = atob(token.replaceAll("-", "+").replaceAll("_", "/"));
    return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
  } catch {
    throw new StatusQueryError("invalid continue token: pass the `continue` value of the previous page as it is");
  }
}
