// main()'s serving step: the health port (--liveness), the protected port (--metrics-bind-address) and the admission
// port (--webhook-bind-address), with the reconcile history behind the status page's sparklines. The protected port's
// and the admission port's modules are imported only when their flags ask for them.

import type { Hub } from "../../hub/hub.ts";
import { serveHealth } from "../../hub/http/http_server.ts";
import type * as TlsMaterial from "../../hub/http/tls_material.ts";
import type { TlsPair } from "../../hub/http/tls_material.ts";
import { ReconcileHistory, reconcileTotals } from "../../hub/health/reconcile_history.ts";
import { type ClusterAccess, ConfigError, KubeClient } from "../../kube/mod.ts";
import type { Operator } from "../../runtime/mod.ts";
import { errorText, type Logger } from "../../util/mod.ts";
import type { Admission } from "./admission_setup.ts";
import { loadFeature } from "../feature_import.ts";
import type { HubFlags, MetricsServingFlags } from "../flags/hub_flags.ts";
import { granted } from "../permissions.ts";
import { UsageError } from "../usage_error.ts";

/** The hub's ports, serving. */
export interface Servers {
  /** Settles once every port has stopped (after `signal` aborts) and the access-review client is closed. */
  done: Promise<void>;
  /** The admission parts with `--webhook-bind-address`; undefined without it. */
  admission: Admission | undefined;
}

export interface ServersOptions {
  home: ClusterAccess | undefined;
  /** Every operator the hub hosts (admission serves their webhooks). */
  hosted: Operator[];
  logger: Logger;
  /** Stops every port; the caller aborts it when a start fails (see below). */
  signal: AbortSignal;
}

/**
 * Starts the ports the flags ask for, in order: the health port, the protected port (needs a home cluster: its
 * TokenReviews and SubjectAccessReviews go there), the admission port. /status and /metrics are on the protected port
 * when it is asked for, else on the health port.
 *
 * Guarantees: a port that cannot be opened, a certificate that cannot be read or made, or an unusable admission
 * configuration throws UsageError with one line (`invalid --liveness: cannot listen on HOST:PORT: …` for the health
 * port); the access-review client is closed then. What was started before keeps serving until the caller aborts
 * `signal`, which it must do on any throw.
 */
export async function startServers(flags: HubFlags, hub: Hub, o: ServersOptions): Promise<Servers> {
  const { logger, signal } = o;
  // The reconcile rates behind the status page's sparklines, sampled while /status is served anywhere.
  const history = flags.liveness || flags.metricsServing
    ? new ReconcileHistory({
      read: () => reconcileTotals(hub.metrics.registry),
      clusters: () => hub.clusters(),
      logger,
    })
    : undefined;
  const servers: Promise<void>[] = history ? [history.start(signal)] : [];
  if (flags.liveness) {
    const { hostname, port } = flags.liveness;
    try {
      servers.push(serveHealth(hub, {
        hostname,
        port,
        logger,
        statusAndMetrics: !flags.metricsServing,
        history,
        onListen: (addr) => logger.info("health endpoint listening", { url: `http://${addr.hostname}:${addr.port}` }),
      }, signal));
    } catch (err) {
      throw new UsageError(`invalid --liveness: cannot listen on ${hostname}:${port}: ${errorText(err)}`, {
        cause: err,
      });
    }
  }
  let reviewClient: KubeClient | undefined;
  if (flags.metricsServing && o.home) {
    const m = flags.metricsServing;
    const [{ serveProtected }, { RequestAuthorizer }, tlsMaterial] = await Promise.all([
      loadFeature("--metrics-bind-address", () => import("../../hub/http/protected_server.ts")),
      loadFeature("--metrics-bind-address", () => import("../../hub/http/request_auth.ts")),
      loadFeature("--metrics-bind-address", () => import("../../hub/http/tls_material.ts")),
    ]);
    const reviewHome = o.home;
    reviewClient = new KubeClient(reviewHome, {
      logger: logger.child({ cluster: reviewHome.name }),
      userAgent: "operator-hub/access-review",
      requestTimeoutMs: hub.limits.requestTimeoutMs,
      http2: flags.http2,
    });
    try {
      const tls = m.secure ? await protectedPortTls(m, tlsMaterial) : undefined;
      servers.push(serveProtected(hub, {
        hostname: m.hostname,
        port: m.port,
        tls,
        tlsFiles: m.tls,
        authorizer: new RequestAuthorizer({ api: reviewClient, registry: hub.metrics.registry, logger }),
        history,
        logger,
        onListen: (addr) =>
          logger.info("metrics and status listening", {
            url: `${tls ? "https" : "http"}://${addr.hostname}:${addr.port}`,
            homeCluster: reviewHome.name,
            certificate: m.tls ? "files" : tls ? "self-signed" : "none",
          }),
      }, signal));
    } catch (err) {
      reviewClient.close();
      throw new UsageError(errorText(err), { cause: err });
    }
  }
  let admission: Admission | undefined;
  if (flags.webhook) {
    try {
      const { setUpAdmission } = await loadFeature("--webhook-bind-address", () => import("./admission_setup.ts"));
      admission = await setUpAdmission(flags.webhook, {
        hub,
        operators: o.hosted,
        namespaces: flags.namespaces,
        home: o.home,
        requestTimeoutMs: hub.limits.requestTimeoutMs,
        http2: flags.http2,
        logger,
      });
      servers.push(admission.run(signal));
    } catch (err) {
      reviewClient?.close();
      if (err instanceof ConfigError) throw new UsageError(err.message, { cause: err });
      throw err;
    }
  }
  const done = Promise.all(servers).then(() => {}).finally(() => reviewClient?.close());
  return { done, admission };
}

/** The protected port's certificate: from the files, else a self-signed one for this host. */
async function protectedPortTls(m: MetricsServingFlags, tlsMaterial: typeof TlsMaterial): Promise<TlsPair> {
  const { readTlsFiles, selfSignedTls, TlsMaterialError } = tlsMaterial;
  if (m.tls) {
    try {
      return await readTlsFiles(m.tls.certFile, m.tls.keyFile);
    } catch (err) {
      if (err instanceof TlsMaterialError) throw new ConfigError(err.message, { cause: err });
      throw err;
    }
  }
  const names = granted({ name: "sys", kind: "hostname" }) ? [Deno.hostname()] : [];
  if (m.hostname !== "0.0.0.0" && m.hostname !== "::" && !/^[\d.:]+$/.test(m.hostname)) names.push(m.hostname);
  return await selfSignedTls(names);
}
