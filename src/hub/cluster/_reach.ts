// Before any operator's pre-flight or list in a cluster: its server answers at all, tried alone and with backoff.

import { failureStateOf, httpStatusOf, type KubeClient } from "../../kube/mod.ts";
import type { WatchPhase } from "../../runtime/mod.ts";
import { Backoff, type Clock, errorText, type LogBurst, type Logger, oneLine } from "../../util/mod.ts";

/** Opens a TCP connection (and nothing more); the default is Deno.connect. */
export type TcpConnect = (hostname: string, port: number) => Promise<{ close(): void }>;

/** Where the first contact is made, and what it reports. */
export interface ReachContext {
  client: KubeClient;
  /** The cluster's server URL, and its proxy's if it has one: the TCP probe goes to the proxy then. */
  server: string;
  proxyUrl?: string;
  /** Default Deno.connect. */
  connect?: TcpConnect;
  /** A TCP connect that takes longer fails. Default 10 s (client-go's dial timeout is 30 s, its TLS handshake's 10). */
  connectTimeoutMs?: number;
  clock: Clock;
  log: Logger;
  /** Where the first line of each distinct error goes instead of `log` (a summarised stream shared by clusters). */
  summary?: { burst: LogBurst; cluster: string };
  /**
   * Where contact stands: `connecting` (no error) as it starts and once the server answered, then after each failed
   * attempt the state it means (`unreachable`) with its one-line error.
   */
  onState(state: WatchPhase, error: string | null): void;
}

/**
 * Tries until the server answers with any HTTP status (a 401 or 403 is an answer: the pre-flight then says what it
 * means); true once it did, false when `signal` aborted first. Each attempt first opens a bare TCP connection to the
 * server (or its proxy) and closes it; only once that connects is `GET /version` sent through the cluster's client.
 *
 * Guarantees: a server that never answers (a closed port, a black hole, a name that does not resolve) costs one
 * attempt per backoff step (1 s doubling to 30 s, with jitter), instead of every operator's discovery, access reviews
 * and list at each step, and a refused or unresolvable one costs no TLS connection at all; the first failure is logged
 * at warn (into `summary` when given, which writes a few lines for any number of clusters), and again only when the
 * error changes (the repeats at debug), so a cluster that stays unreachable writes one line, not one per attempt.
 *
 * Assumptions: every TLS connection that fails to connect costs memory until the process ends (Deno 2.9's node:tls
 * keeps the TLSWrap of a failed connect behind a global handle, measured with a heap snapshot): the TCP probe keeps
 * such connections to the servers that at least accept TCP.
 */
export async function reach(ctx: ReachContext, signal: AbortSignal): Promise<boolean> {
  const backoff = new Backoff({ initialMs: 1000, maxMs: 30_000 });
  let last: string | undefined;
  ctx.onState("connecting", null);
  while (!signal.aborted) {
    try {
      await tcpProbe(ctx, signal);
      await ctx.client.request("GET", "/version", { signal });
      ctx.onState("connecting", null);
      return true;
    } catch (err) {
      if (signal.aborted) return false;
      if (httpStatusOf(err) !== undefined) {
        ctx.onState("connecting", null);
        return true;
      }
      const error = oneLine(errorText(err)); // may quote an untrusted cluster name
      const delay = backoff.next(ctx.clock.now());
      ctx.onState(failureStateOf(err), error);
      const fields = { state: failureStateOf(err), error, retryInMs: delay };
      if (error === last) ctx.log.debug("cluster not reachable", fields);
      else if (ctx.summary) ctx.summary.burst.note(ctx.summary.cluster, { cluster: ctx.summary.cluster, ...fields });
      else ctx.log.warn("cluster not reachable", fields);
      last = error;
      await ctx.clock.sleep(delay, signal);
    }
  }
  return false;
}

/** Opens and closes one TCP connection to the server, or its proxy; throws what the connect threw, or a timeout. */
async function tcpProbe(ctx: ReachContext, signal: AbortSignal): Promise<void> {
  const url = new URL(ctx.proxyUrl ?? ctx.server);
  const port = Number(url.port || (url.protocol === "http:" ? 80 : 443));
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const connect: TcpConnect = ctx.connect ?? ((h, p) => Deno.connect({ hostname: h, port: p }));
  const ms = ctx.connectTimeoutMs ?? 10_000;
  const attempt = connect(hostname, port);
  let timer: { cancel(): void } | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = ctx.clock.setTimer(ms, () => reject(new Error(`connect to ${url.host} timed out after ${ms} ms`)));
  });
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    (await Promise.race([attempt, timeout, aborted])).close();
  } catch (err) {
    // A connect that succeeds after its timeout is closed then.
    attempt.then((c) => c.close(), () => {});
    throw new Error(`cannot connect to ${url.host}`, { cause: err });
  } finally {
    timer?.cancel();
    signal.removeEventListener("abort", onAbort);
  }
}
