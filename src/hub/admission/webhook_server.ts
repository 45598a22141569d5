// The admission port (--webhook-bind-address): AdmissionReview v1 over TLS, behind the connection gate, for every
// webhook of every operator and every cluster whose apiserver calls.

import type * as prom from "../../util/prometheus.ts";
import type { AdmissionWebhook, Operator } from "../../runtime/mod.ts";
import { errorText, LogBurst, type Logger, oneLine, redact, SystemClock } from "../../util/mod.ts";
import type { ConnectionLimits, KeepAliveLimits } from "../http/connection_gate.ts";
import { type GatedServer, serveGated } from "../http/gated_server.ts";
import { isLoopbackBind } from "../http/host_guard.ts";
import { TlsFront } from "../http/tls_front.ts";
import {
  MAX_REVIEW_BYTES,
  parseReview,
  parseWebhookPath,
  ReviewInputError,
  reviewResponse,
} from "./admission_review.ts";
import { BodyBudget, type BodyBudgetLimits } from "./body_budget.ts";
import { readReviewBody } from "./review_body.ts";
import { ServedClusters } from "./served_clusters.ts";
import type { WebhookCertificates } from "./webhook_certs.ts";
import { WebhookMetrics } from "./webhook_metrics.ts";

/** How the admission port listens and what it serves. */
export interface WebhookServerOptions {
  hostname: string;
  port: number;
  certificates: WebhookCertificates;
  /** The operators whose webhooks are served (those without webhooks are ignored). */
  operators: readonly Operator[];
  /** Where the webhook series and the gate's shed counter are registered. */
  registry: prom.MetricRegistry;
  logger: Logger;
  /** The gate's limits (defaults: connection_gate.ts). */
  limits?: ConnectionLimits;
  /** Keep-alive limits (defaults: request_framing.ts: 100 requests, 15 s idle). */
  keepAlive?: KeepAliveLimits;
  /** The largest AdmissionReview body read. Default MAX_REVIEW_BYTES (4 MiB). */
  maxBodyBytes?: number;
  /** A body must arrive whole within this of its request's head. Default 10 s. */
  bodyTimeoutMs?: number;
  /** The bytes of bodies held at once across every connection (defaults: body_budget.ts, 64 KiB each + 32 MiB). */
  bodyBudget?: BodyBudgetLimits;
}

/** Thrown when the admission port cannot be bound or its first certificate is refused. */
export class WebhookServerError extends Error {
  override name = "WebhookServerError";
}

/**
 * Serves `POST /admission/OPERATOR/validating|mutating/ID/CLUSTER`.
 *
 * Guarantees:
 * - the port is bound in the constructor (a port in use or a refused certificate throws WebhookServerError at once);
 * - every request passes the connection gate (header deadline per request) behind a TLS front whose socket never
 *   closes and which keeps the connection cap: at the cap (256) the connection idle the longest is closed to make
 *   room (its TLS handshake, a head still arriving, or kept alive between requests; none idle, the slowest body), so
 *   idle and slow connections, however many, cannot keep an apiserver's call out (tls_front.ts,
 *   connection_slots.ts); connections are kept alive (an apiserver reuses one TLS session for up to 100 calls, closed
 *   after 15 s idle; the probe and protected ports stay one request per connection); a new certificate from
 *   `certificates` is served from the next connection on without a refused connection (tls_front.ts), and the
 *   connections kept alive on the old one are closed between requests when it retires;
 * - the body is untrusted: more than `maxBodyBytes` is refused with 413 before it is all read, one not whole
 *   `bodyTimeoutMs` after its head with 408, one the port's byte budget has no room for with 429 (review_body.ts),
 *   anything but an admission.k8s.io/v1 AdmissionReview with a uid and a known operation with 400, a wrong method
 *   with 405, a content type other than JSON with 415, a path naming no webhook or a cluster not served with 404;
 *   each with one line naming the problem, never echoing the body (logged 5 times per 10 s in full, the rest counted
 *   in one summary line); the apiserver then applies the failurePolicy;
 *   408, 413 and 429 close the connection;
 * - a handler that throws anything but an AdmissionError, or outlives its webhook's timeoutSeconds, gets 500 (504):
 *   the apiserver applies failurePolicy; the error is logged with the webhook and cluster, never the request body;
 * - every answer is counted in `controller_runtime_webhook_requests_total{webhook,code,cluster}` and the reviews are
 *   timed in `controller_runtime_webhook_latency_seconds{webhook,cluster}`, labelled only with webhooks and clusters
 *   served (`clusters`); 404 and 405 are counted under `unknown` in series that exist from the start, so no request
 *   adds a series (webhook_metrics.ts); a cluster's series go when it is no longer served.
 *
 * Assumptions: the cluster in the path is who the installer told to call it; anyone who can reach the port can claim
 * any cluster served, which gets them a verdict and nothing else (handlers decide, they hold no credentials of the
 * caller). `clusters` is kept by the registry's engage target (`clusters.tracking`): until then no call is answered.
 */
export class WebhookServer {
  readonly #o: WebhookServerOptions;
  readonly #front: TlsFront;
  readonly #webhooks = new Map<string, AdmissionWebhook>();
  readonly #metrics: WebhookMetrics;
  readonly #budget: BodyBudget;
  /** "admission request refused" lines: strangers can cause them at will, so 5 per 10 s in full, then counted. */
  readonly #refusals: LogBurst;
  /** The clusters whose calls are answered. */
  readonly clusters = new ServedClusters();
  #inner: GatedServer;
  /** Servers of earlier certificates whose connections are still ending (at stop, they are shut down). */
  readonly #retired = new Set<GatedServer>();

  constructor(options: WebhookServerOptions) {
    this.#o = options;
    for (const op of options.operators) {
      for (const w of op.webhooks ?? []) this.#webhooks.set(`${op.name}/${w.type}/${w.id}`, w);
    }
    this.#metrics = new WebhookMetrics(options.registry);
    this.clusters.onForget((name) => this.#metrics.forgetCluster(name));
    this.#budget = new BodyBudget(options.bodyBudget);
    this.#refusals = new LogBurst({
      logger: options.logger,
      level: "warn",
      msg: "admission request refused",
      clock: new SystemClock(),
    });
    try {
      this.#front = new TlsFront(
        {
          hostname: options.hostname,
          port: options.port,
          maxConnections: options.limits?.maxConnections,
          lifetimeMs: options.limits?.lifetimeMs,
          // Counted with the gates' own sheds (header timeouts, oversized heads), under the same port label.
          onShed: (reason) => shedCounter(options.registry)?.inc({ port: "webhook", reason }),
        },
        () => this.#inner.addr.port,
      );
    } catch (err) {
      throw new WebhookServerError(`cannot serve --webhook-bind-address: ${errorText(err)}`, { cause: err });
    }
    try {
      this.#inner = this.#bindInner();
    } catch (err) {
      this.#front.abort();
      throw err;
    }
    options.certificates.onChange(() => this.#rotate());
  }

  /** The public address (its actual port when 0 was asked for). */
  get addr(): Deno.NetAddr {
    return this.#front.addr;
  }

  /** The names of the webhooks served, `operator/type/id`. */
  get webhooks(): string[] {
    return [...this.#webhooks.keys()];
  }

  /** Serves until `signal` aborts; settles once every socket is closed. */
  async start(signal: AbortSignal): Promise<void> {
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
    this.#front.close();
    const retired = [...this.#retired].map((old) => old.shutdown());
    const grace = setTimeout(() => this.#front.abort(), 2_000);
    await Promise.all([this.#front.finished, this.#inner.shutdown(), ...retired]);
    clearTimeout(grace);
    this.#refusals.flush();
  }

  /** A new certificate: a new server behind the front takes new connections; the old one finishes its own. */
  #rotate(): void {
    let next: GatedServer;
    try {
      next = this.#bindInner();
    } catch (err) {
      this.#o.logger.warn("new webhook certificate refused; still serving the previous one", {
        error: errorText(err),
      });
      return;
    }
    const old = this.#inner;
    this.#inner = next;
    // The old server gets no new connection from now on; those it has end on their own (retire): a head still
    // arriving is read, a kept-alive connection's next request is its last, and an idle one closes at its idle
    // timeout, not at once, which would race an apiserver's next call on it (EOF, and Go does not resend a POST).
    this.#retired.add(old);
    void old.retire().finally(() => this.#retired.delete(old));
    this.#o.logger.info("webhook certificate rotated", { port: this.#front.addr.port });
  }

  #bindInner(): GatedServer {
    const tls = this.#o.certificates.current();
    try {
      return serveGated({
        ...this.#o.limits,
        // The cap is kept at the front, on the TCP sockets; the gate tells it what each connection is doing.
        slots: this.#front.behind(),
        keepAlive: this.#o.keepAlive ?? {},
        hostname: "127.0.0.1",
        port: 0,
        tls: { cert: tls.cert, key: tls.key },
        hostGuard: isLoopbackBind(this.#o.hostname),
        metrics: { registry: this.#o.registry, portName: "webhook" },
        onError: (err) => {
          this.#o.logger.warn("admission request failed", { error: errorText(err) });
          return new Response("Internal Server Error\n", { status: 500 });
        },
      }, (req) => this.#handle(req));
    } catch (err) {
      throw new WebhookServerError(`cannot serve admission over HTTPS: ${errorText(err)}`, { cause: err });
    }
  }

  async #handle(req: Request): Promise<Response> {
    const started = performance.now();
    // Before the route is known to be served, nothing from the request becomes a label (webhook_metrics.ts).
    if (req.method !== "POST") {
      this.#metrics.unrouted(405);
      return text(405, "method not allowed: an apiserver POSTs an AdmissionReview");
    }
    const route = parseWebhookPath(new URL(req.url).pathname);
    const name = route ? `${route.operator}/${route.type}/${route.id}` : "";
    const webhook = route ? this.#webhooks.get(name) : undefined;
    if (!route || !webhook || !this.clusters.has(route.cluster)) {
      this.#metrics.unrouted(404);
      return text(404, "no such webhook: the path names an operator, webhook and cluster this hub serves");
    }
    const cluster = route.cluster;
    const answer = (status: number, body: string | Record<string, unknown>, unread = false) => {
      this.#metrics.observe(name, cluster, status, elapsed(started));
      return typeof body === "string" ? text(status, body, unread) : Response.json(body, { status });
    };
    const type = req.headers.get("content-type") ?? "";
    if (!/^application\/json\b/i.test(type)) return answer(415, "content-type must be application/json");
    const log = this.#o.logger.child({ cluster, webhook: name });
    this.#metrics.inFlight.inc({ webhook: name });
    try {
      const body = await readReviewBody(req, {
        maxBytes: this.#o.maxBodyBytes ?? MAX_REVIEW_BYTES,
        timeoutMs: this.#o.bodyTimeoutMs,
        budget: this.#budget,
      });
      const request = parseReview(body, cluster);
      request.logger = log.child({ namespace: request.namespace, name: request.name });
      const abort = new AbortController();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => {
          abort.abort();
          resolve("timeout");
        }, webhook.timeoutSeconds * 1000);
      });
      try {
        const verdict = await Promise.race([webhook.review(request, abort.signal), timedOut]);
        if (verdict === "timeout") {
          log.warn("admission handler outlived its timeout", { timeoutSeconds: webhook.timeoutSeconds });
          return answer(504, "the handler did not answer within timeoutSeconds");
        }
        log.debug("admission reviewed", {
          namespace: request.namespace,
          name: request.name,
          operation: request.operation,
          allowed: verdict.allowed,
          patched: (verdict.patch?.length ?? 0) > 0,
        });
        return answer(200, reviewResponse(request.uid, verdict));
      } catch (err) {
        log.error("admission handler failed; the apiserver applies the failurePolicy", {
          namespace: request.namespace,
          name: request.name,
          error: redact(oneLine(errorText(err))),
        });
        return answer(500, "the handler failed to decide (see the hub's log)");
      } finally {
        clearTimeout(timer);
      }
    } catch (err) {
      if (!(err instanceof ReviewInputError)) throw err;
      this.#refusals.note(`${cluster} ${name} ${err.status}`, {
        cluster,
        webhook: name,
        status: err.status,
        error: err.message,
      });
      // 408, 413 and 429 leave the body unread: the connection ends with the answer (connection_gate.ts).
      const res = answer(err.status, err.message, err.status !== 400);
      if (err.status === 429) res.headers.set("retry-after", "1");
      return res;
    } finally {
      this.#metrics.inFlight.dec({ webhook: name });
    }
  }
}

/**
 * A one-line answer. `unread`: the body was refused part-read, so it says `connection: close` (the client must not
 * reuse the connection: the gate ends it, as Go's http.Server does with a body it will not drain). Other answers
 * that leave a body unread (404, 405, 415) keep the connection when the body came whole: Deno.serve skips it.
 */
/** The gates' `hub_http_connections_shed_total{port,reason}` (gated_server.ts), once a gate registered it. */
function shedCounter(registry: prom.MetricRegistry): prom.Counter<"port" | "reason"> | undefined {
  return registry.getSingleMetric("hub_http_connections_shed_total") as prom.Counter<"port" | "reason"> | undefined;
}

function text(status: number, body: string, unread = false): Response {
  const headers: Record<string, string> = { "content-type": "text/plain" };
  if (unread) headers.connection = "close";
  return new Response(`${body}\n`, { status, headers });
}

function elapsed(started: number): number {
  return (performance.now() - started) / 1000;
}
