// The protected port's flags (`--metrics-bind-address`, `--metrics-secure`, `--tls-*`): kubebuilder's names, their
// checks and their --help section. Pure.

import { FlagError, type FlagValues } from "./flag_values.ts";

/**
 * The protected port: `--metrics-bind-address HOST:PORT` serves /metrics and /status there only, every request
 * authenticated (TokenReview) and authorised (SubjectAccessReview) in the home cluster. Port 0 picks a free port.
 */
export interface MetricsServingFlags {
  hostname: string;
  port: number;
  /** `--metrics-secure`: HTTPS (default) or plain HTTP for local use. */
  secure: boolean;
  /** `--tls-cert-file` / `--tls-private-key-file`: PEM files re-read when rotated; absent: a self-signed one. */
  tls?: { certFile: string; keyFile: string };
}

/** The protected port's node:util parseArgs options. */
export const METRICS_SERVING_OPTIONS = {
  "metrics-bind-address": { type: "string" },
  "metrics-secure": { type: "string" },
  "tls-cert-file": { type: "string" },
  "tls-private-key-file": { type: "string" },
} as const;

/** The --help section of the protected port's flags. */
export function metricsServingHelp(): string[] {
  return [
    "Protected metrics and status (kubebuilder's defaults; see docs/security.md):",
    "  --metrics-bind-address HOST:PORT",
    "                             serve /metrics and /status there only, e.g. :8443, each request checked",
    "                             by a TokenReview and a SubjectAccessReview (get on the path) in the home",
    "                             cluster; --liveness then keeps just /healthz and /readyz. Answers are",
    "                             cached (accepted tokens 60 s, rejected 10 s); a request that needs a",
    "                             review beyond 4 in flight or 10/s (burst 20) gets 429 and Retry-After",
    "  --metrics-secure=true|false",
    "                             HTTPS (default true) or plain HTTP for local use",
    "  --tls-cert-file FILE       PEM certificate for the protected port, re-read when it changes",
    "  --tls-private-key-file FILE",
    "                             its PEM private key. Without both: a self-signed certificate made at start",
  ];
}

/** A bare `--metrics-secure` (no true/false after it) means true, as Go's boolean flags do: `--metrics-secure=true`. */
export function isBareMetricsSecure(arg: string, next: string | undefined): boolean {
  return arg === "--metrics-secure" && !/^(true|false)$/i.test(next ?? "");
}

/** `--metrics-bind-address`, `--metrics-secure`, `--tls-cert-file`, `--tls-private-key-file` (see MetricsServingFlags). */
export function parseMetricsServing(values: FlagValues): MetricsServingFlags | undefined {
  const bind = values["metrics-bind-address"] as string | undefined;
  const secureRaw = values["metrics-secure"] as string | undefined;
  const certFile = values["tls-cert-file"] as string | undefined;
  const keyFile = values["tls-private-key-file"] as string | undefined;
  if (bind === undefined) {
    const stray = [
      ["--metrics-secure", secureRaw],
      ["--tls-cert-file", certFile],
      ["--tls-private-key-file", keyFile],
    ].find(([, v]) => v !== undefined);
    if (stray) throw new FlagError(`${stray[0]} needs --metrics-bind-address HOST:PORT (e.g. :8443)`);
    return undefined;
  }
  if (secureRaw !== undefined && !/^(true|false)$/i.test(secureRaw)) {
    throw new FlagError(`invalid --metrics-secure "${secureRaw}": choose true or false`);
  }
  const secure = secureRaw === undefined || secureRaw.toLowerCase() === "true";
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new FlagError(
      "--tls-cert-file and --tls-private-key-file go together: give both, or neither for a self-signed one",
    );
  }
  if (certFile !== undefined && !secure) {
    throw new FlagError("--tls-cert-file needs --metrics-secure=true: plain HTTP serves no certificate");
  }
  for (const [flag, v] of [["--tls-cert-file", certFile], ["--tls-private-key-file", keyFile]]) {
    if (v !== undefined && v.trim() === "") throw new FlagError(`invalid ${flag} "": name a PEM file`);
  }
  return { ...parseBindAddress(bind), secure, ...(certFile ? { tls: { certFile, keyFile: keyFile! } } : {}) };
}

/** Parses controller-runtime's `HOST:PORT` form: `:8443`, `0.0.0.0:8443`, `[::]:8443`, `localhost:8443`. */
export function parseBindAddress(raw: string): { hostname: string; port: number } {
  const m = raw.match(/^(?:\[([0-9a-fA-F:.]+)\]|([^:\[\]\s]*)):(\d{1,5})$/);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) {
    throw new FlagError(
      `invalid --metrics-bind-address "${raw}": expected HOST:PORT, e.g. :8443, 127.0.0.1:8443 or [::]:8443`,
    );
  }
  return { hostname: m[1] ?? (m[2] || "0.0.0.0"), port };
}
