// --webhook-bind-address: builds the admission port, its certificates and the configuration installer for main.ts.

import {
  CertDirCertificates,
  installerPermissions,
  removingWebhooks,
  SelfMadeCertificates,
  WebhookCertificateError,
  type WebhookCertificates,
  type WebhookEndpoint,
  WebhookInstaller,
  WebhookServer,
  WebhookServerError,
} from "../../hub/admission/mod.ts";
import type { Hub } from "../../hub/mod.ts";
import type { EngageTarget } from "../../hub/providers/mod.ts";
import { type ClusterAccess, ConfigError, IN_CLUSTER, type PermissionCheck } from "../../kube/mod.ts";
import type { Operator } from "../../runtime/mod.ts";
import { errorText, type Logger } from "../../util/mod.ts";
import type { WebhookFlags } from "../flags/hub_flags.ts";

export { installerPermissions };

/** The admission parts of a running hub. */
export interface Admission {
  server: WebhookServer;
  installer: WebhookInstaller;
  certificates: WebhookCertificates;
  /** Serves, renews and installs until `signal` aborts. */
  run(signal: AbortSignal): Promise<void>;
  /** The registry's target, with a cluster's configurations removed when it leaves the registry. */
  target(target: EngageTarget): EngageTarget;
}

/** The RBAC pre-flight addition when admission is on: none when off. */
export function admissionPermissions(f: WebhookFlags | undefined): PermissionCheck[] {
  return f ? installerPermissions() : [];
}

/**
 * Binds the admission port and wires the installer to `hub` (every cluster it engages gets the configurations).
 * Throws ConfigError (a usage error, exit 2) when the certificates cannot be read or the port cannot be bound.
 */
export async function setUpAdmission(f: WebhookFlags, options: {
  hub: Hub;
  operators: readonly Operator[];
  namespaces: readonly string[];
  home?: ClusterAccess;
  requestTimeoutMs?: number;
  http2?: boolean;
  logger: Logger;
}): Promise<Admission> {
  const logger = options.logger;
  let certificates: WebhookCertificates;
  try {
    certificates = f.certDir
      ? await CertDirCertificates.create({
        dir: f.certDir,
        check: tlsRefusal,
        onError: (e) =>
          logger.warn("cannot take the webhook certificate files; still serving the previous ones", {
            error: e.message,
          }),
      })
      : await SelfMadeCertificates.create({
        ...servingNames(f),
        servingLifetimeMs: f.certLifetimeMs,
        onError: (e) => logger.warn("webhook certificate renewal failed; retrying", { error: e.message }),
      });
  } catch (err) {
    if (err instanceof WebhookCertificateError) throw new ConfigError(`--webhook-cert-dir: ${err.message}`);
    throw err;
  }
  let server: WebhookServer;
  try {
    server = new WebhookServer({
      hostname: f.hostname,
      port: f.port,
      certificates,
      operators: options.operators,
      registry: options.hub.metrics.registry,
      logger: logger.child({ component: "admission" }),
    });
  } catch (err) {
    if (err instanceof WebhookServerError) throw new ConfigError(err.message);
    throw err;
  }
  const port = server.addr.port;
  const home = options.home;
  const endpointFor = (cluster: string): WebhookEndpoint => {
    if (f.service && home && (cluster === home.name || cluster === IN_CLUSTER)) return { service: f.service };
    if (f.url) return { url: f.url };
    const local = ["0.0.0.0", "::", "", "localhost"].includes(f.hostname) ? "127.0.0.1" : f.hostname;
    return { url: `https://${local.includes(":") ? `[${local}]` : local}:${port}` };
  };
  const installer = new WebhookInstaller({
    hubName: f.name,
    operators: options.operators,
    namespaces: options.namespaces,
    caBundle: () => certificates.caBundle(),
    endpointFor,
    requestTimeoutMs: options.requestTimeoutMs,
    http2: options.http2,
    logger: logger.child({ component: "webhook-installer" }),
  });
  // A new CA bundle (a cert-manager CA rotation) goes into every configuration at once; a renewed serving
  // certificate under the same CA changes nothing there (the sync finds them in place).
  certificates.onChange(() => installer.refresh());
  options.hub.observeClusters({
    engaged: (name, access) => installer.engaged(name, access),
    disengaged: (name) => void installer.disengaged(name),
  });
  options.hub.showAdmission(() => ({
    port,
    webhooks: server.webhooks,
    certificate: f.certDir ? "files" : "self-made",
    clusters: installer.status(),
  }));
  logger.info("admission webhooks listening", {
    url: `https://${f.hostname}:${port}`,
    webhooks: server.webhooks.length,
    certificate: f.certDir ? "files" : "self-made",
    name: f.name,
  });
  return {
    server,
    installer,
    certificates,
    run: async (signal) => {
      await Promise.all([
        server.start(signal),
        certificates.start(signal).catch((err) =>
          logger.error("webhook certificates stopped", { error: errorText(err) })
        ),
      ]);
      await installer.stop();
    },
    // Every cluster the registry engages is served (its calls answered) until disengaged; no other name ever is.
    target: (target) => server.clusters.tracking(removingWebhooks(target, installer, logger)),
  };
}

/** The names and addresses the self-made serving certificate covers. */
function servingNames(f: WebhookFlags): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  const add = (host: string) => {
    const h = host.replace(/^\[|\]$/g, "");
    if (!h || h === "0.0.0.0" || h === "::") return;
    if (/^[\d.]+$/.test(h) || h.includes(":")) ipAddresses.push(h);
    else dnsNames.push(h);
  };
  add(f.hostname);
  if (f.url) add(new URL(f.url).hostname);
  if (f.service) {
    const { name, namespace } = f.service;
    dnsNames.push(name, `${name}.${namespace}`, `${name}.${namespace}.svc`, `${name}.${namespace}.svc.cluster.local`);
  }
  return { dnsNames, ipAddresses };
}

/** Why the TLS stack refuses a pair (unparsable, a key not matching), or undefined. */
function tlsRefusal(pair: { cert: string; key: string }): string | undefined {
  try {
    Deno.listenTls({ hostname: "127.0.0.1", port: 0, cert: pair.cert, key: pair.key }).close();
    return undefined;
  } catch (err) {
    return errorText(err);
  }
}
