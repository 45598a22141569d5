// The admission port's flags (`--webhook-*`): parsing, checks and their --help section. Pure.

import { DNS_LABEL, FlagError, type FlagValues } from "./flag_values.ts";
import { parseBindAddress } from "./metrics_serving_flags.ts";

/** `--webhook-bind-address` and friends; undefined without it (admission off, the default). */
export interface WebhookFlags {
  hostname: string;
  port: number;
  /** `--webhook-cert-dir`: tls.crt, tls.key and ca.crt (cert-manager's Secret), re-read when they change. */
  certDir?: string;
  /** `--webhook-url`: the base URL remote apiservers reach the hub at. */
  url?: string;
  /** `--webhook-service NS/NAME[:PORT]`: the Service the home cluster's apiserver reaches the hub through. */
  service?: { namespace: string; name: string; port: number };
  /** `--webhook-name`: keeps two hubs' configurations apart. Default `default`. */
  name: string;
  /** `--webhook-cert-lifetime SECONDS`: the self-made serving certificate's lifetime. Default 30 days. */
  certLifetimeMs: number;
}

/** node:util parseArgs options of the admission port. */
export const WEBHOOK_OPTIONS = {
  "webhook-bind-address": { type: "string" },
  "webhook-cert-dir": { type: "string" },
  "webhook-url": { type: "string" },
  "webhook-service": { type: "string" },
  "webhook-name": { type: "string" },
  "webhook-cert-lifetime": { type: "string" },
} as const;

/** The --help section of the admission port. */
export function webhookHelp(): string[] {
  return [
    "Admission webhooks (operators' validate and mutate handlers; off by default; see docs/writing-operators.md):",
    "  --webhook-bind-address HOST:PORT",
    "                             serve AdmissionReview v1 over HTTPS there (behind the connection gate), and",
    "                             install each operator's Validating/MutatingWebhookConfiguration in every",
    "                             engaged cluster this replica owns (RBAC: get/list/watch/create/patch/delete)",
    "  --webhook-cert-dir DIR     tls.crt, tls.key and ca.crt (cert-manager's Secret), re-read when they change;",
    "                             default: a CA and a serving certificate made by the hub, renewed in place",
    "  --webhook-url BASE         https URL the apiservers reach the hub at, e.g. https://hub.example.com:9443",
    "                             (default https://127.0.0.1:PORT, for clusters on this machine)",
    "  --webhook-service NS/NAME[:PORT]",
    "                             the home cluster's apiserver calls the hub through this Service (port 443)",
    "  --webhook-name NAME        in every configuration's name, operator-hub-OPERATOR-NAME, so two hubs",
    "                             sharing clusters keep theirs apart (default: default)",
    "  --webhook-cert-lifetime SECONDS",
    "                             the self-made serving certificate's lifetime, renewed at two thirds",
    "                             (default 2592000, 30 days)",
  ];
}

/** Parses the `--webhook-*` flags; throws FlagError naming the flag and the value seen. */
export function parseWebhookFlags(values: FlagValues): WebhookFlags | undefined {
  const bind = values["webhook-bind-address"] as string | undefined;
  const others = ["webhook-cert-dir", "webhook-url", "webhook-service", "webhook-name", "webhook-cert-lifetime"];
  if (bind === undefined) {
    const stray = others.find((f) => values[f] !== undefined);
    if (stray) throw new FlagError(`--${stray} needs --webhook-bind-address HOST:PORT (e.g. :9443)`);
    return undefined;
  }
  let addr: { hostname: string; port: number };
  try {
    addr = parseBindAddress(bind);
  } catch {
    throw new FlagError(
      `invalid --webhook-bind-address "${bind}": expected HOST:PORT, e.g. :9443, 127.0.0.1:9443 or [::]:9443`,
    );
  }
  const certDir = values["webhook-cert-dir"] as string | undefined;
  if (certDir !== undefined && certDir.trim() === "") {
    throw new FlagError(`invalid --webhook-cert-dir "": name the folder holding tls.crt and tls.key`);
  }
  const url = values["webhook-url"] as string | undefined;
  if (url !== undefined) {
    let u: URL | undefined;
    try {
      u = new URL(url);
    } catch { /* below */ }
    if (!u || u.protocol !== "https:" || u.search || u.hash || u.username || u.password) {
      throw new FlagError(
        `invalid --webhook-url "${url}": an https URL without query or credentials, e.g. https://hub.example.com:9443`,
      );
    }
  }
  const serviceRaw = values["webhook-service"] as string | undefined;
  let service: WebhookFlags["service"];
  if (serviceRaw !== undefined) {
    const m = serviceRaw.match(/^([a-z0-9-]+)\/([a-z0-9-]+)(?::(\d{1,5}))?$/);
    const port = m?.[3] ? Number(m[3]) : 443;
    if (!m || !DNS_LABEL.test(m[1]) || !DNS_LABEL.test(m[2]) || port < 1 || port > 65535) {
      throw new FlagError(
        `invalid --webhook-service "${serviceRaw}": expected NAMESPACE/NAME[:PORT], e.g. hub/webhooks`,
      );
    }
    service = { namespace: m[1], name: m[2], port };
  }
  const name = (values["webhook-name"] as string | undefined) ?? "default";
  if (name.length > 40 || !DNS_LABEL.test(name)) {
    throw new FlagError(`invalid --webhook-name "${name}": a DNS label of at most 40 characters`);
  }
  const lifetimeRaw = values["webhook-cert-lifetime"] as string | undefined;
  const lifetime = lifetimeRaw === undefined ? 30 * 24 * 3600 : Number(lifetimeRaw);
  if (!Number.isFinite(lifetime) || lifetime < 3) {
    throw new FlagError(`invalid --webhook-cert-lifetime "${lifetimeRaw}": seconds, at least 3`);
  }
  if (certDir !== undefined && lifetimeRaw !== undefined) {
    throw new FlagError("--webhook-cert-lifetime applies to the hub's own certificate: not with --webhook-cert-dir");
  }
  return {
    ...addr,
    ...(certDir !== undefined ? { certDir } : {}),
    ...(url !== undefined ? { url } : {}),
    ...(service ? { service } : {}),
    name,
    certLifetimeMs: lifetime * 1000,
  };
}
