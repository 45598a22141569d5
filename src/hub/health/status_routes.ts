// /status (JSON, or the HTML page for a browser) and /metrics: the answers both HTTP servers give once a request may see them.

import type { Hub, HubHealth } from "../hub.ts";
import type { ReconcileHistory, ReconcileHistorySnapshot } from "./reconcile_history.ts";
import { STATUS_PAGE_HEADERS, STATUS_PAGE_HTML } from "./status_page.ts";
import {
  pagedStatus,
  parseStatusQuery,
  STATUS_DEFAULT_LIMIT,
  type StatusQuery,
  StatusQueryError,
  type StatusSummary,
} from "./status_view.ts";

/**
 * The /status document: the hub's health plus, when sampled, the reconcile rates behind the sparklines, one page of
 * the clusters at a time (status_view.ts) with a summary of them all.
 */
export type StatusDocument = HubHealth & {
  reconcileHistory?: ReconcileHistorySnapshot;
  summary: StatusSummary;
  /** The next page's token (`?continue=`), when more clusters follow. */
  continue?: string;
};

/** One page of the /status document (default: the first STATUS_DEFAULT_LIMIT clusters by name). */
export function statusDocument(
  hub: Hub,
  history?: ReconcileHistory,
  query: StatusQuery = { limit: STATUS_DEFAULT_LIMIT },
): StatusDocument {
  return pagedStatus({ ...hub.health(), ...(history ? { reconcileHistory: history.snapshot() } : {}) }, query);
}

/**
 * /status: the page to a browser (`Accept: text/html` preferred), the JSON document otherwise: `?limit=N` (default
 * 500, at most 5000) clusters by name, `?continue=TOKEN` for the next page, `?cluster=NAME` (repeatable) for some;
 * a bad parameter is a 400 with one line.
 */
export function answerStatus(req: Request, hub: Hub, history?: ReconcileHistory): Response {
  if (prefersHtml(req.headers.get("accept"))) return statusPage(200);
  let query: StatusQuery;
  try {
    query = parseStatusQuery(new URL(req.url).searchParams);
  } catch (err) {
    if (!(err instanceof StatusQueryError)) throw err;
    return new Response(`${err.message}\n`, {
      status: 400,
      headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
    });
  }
  return new Response(JSON.stringify(statusDocument(hub, history, query)) + "\n", {
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}

/** The page alone, e.g. as the body of a 401 or 403 to a browser: it holds no data. */
export function statusPage(status: number): Response {
  return new Response(STATUS_PAGE_HTML, { status, headers: STATUS_PAGE_HEADERS });
}

export async function answerMetrics(hub: Hub): Promise<Response> {
  return new Response(await hub.metrics.registry.metrics(), {
    headers: { "content-type": hub.metrics.registry.contentType },
  });
}

/**
 * Whether an Accept header prefers HTML to JSON: `text/html` listed with a quality above 0 and at least that of
 * `application/json` (absent counts as not acceptable). Browsers' navigations say `text/html,…,*\/*;q=0.8`; curl
 * says `*\/*` and gets JSON.
 */
export function prefersHtml(accept: string | null): boolean {
  if (!accept) return false;
  const quality = new Map<string, number>();
  for (const part of accept.split(",")) {
    const [type, ...params] = part.trim().toLowerCase().split(";").map((s) => s.trim());
    const q = params.find((p) => p.startsWith("q="));
    const value = q ? Number(q.slice(2)) : 1;
    if (type) quality.set(type, Number.isFinite(value) ? value : 0);
  }
  const html = quality.get("text/html") ?? 0;
  return html > 0 && html >= (quality.get("application/json") ?? -1);
}
