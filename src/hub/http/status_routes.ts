// /status (JSON, or the HTML page for a browser) and /metrics: the answers both HTTP servers give once a request may see them.

import type { Hub, HubHealth } from "../hub.ts";
import type { ReconcileHistory, ReconcileHistorySnapshot } from "../reconcile_history.ts";
import { STATUS_PAGE_HEADERS, STATUS_PAGE_HTML } from "./status_page.ts";

/** The full /status document: the hub's health plus, when sampled, the reconcile rates behind the sparklines. */
export type StatusDocument = HubHealth & { reconcileHistory?: ReconcileHistorySnapshot };

export function statusDocument(hub: Hub, history?: ReconcileHistory): StatusDocument {
  return { ...hub.health(), ...(history ? { reconcileHistory: history.snapshot() } : {}) };
}

/** /status: the page to a browser (`Accept: text/html` preferred), the JSON document otherwise. */
export function answerStatus(req: Request, hub: Hub, history?: ReconcileHistory): Response {
  if (prefersHtml(req.headers.get("accept"))) return statusPage(200);
  return new Response(JSON.stringify(statusDocument(hub, history)) + "\n", {
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
