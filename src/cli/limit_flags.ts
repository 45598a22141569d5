// The hub's numeric limit flags (`--concurrency`, `--qps`, the timeouts …): their table, checks and --help lines. Pure.

import { CONCURRENCY_PER_CLUSTER, DEFAULT_LIMITS, type HubLimits, MAX_SCALED_CONCURRENCY } from "../hub/hub_limits.ts";
import { FlagError, type FlagValues } from "./flag_values.ts";

interface LimitFlag {
  key: keyof HubLimits;
  /** Flag value × scale = the limit (seconds → ms). */
  scale: number;
  integer: boolean;
  help: string;
  /** A size in bytes: a whole number, or one with a Kubernetes binary suffix (Ki, Mi, Gi). */
  bytes?: boolean;
}

/** Defaults --help explains, rather than one fixed number: those that scale with the clusters, and why. */
const DEFAULT_TEXT: Partial<Record<keyof HubLimits, string>> = {
  concurrency: `16, or ${CONCURRENCY_PER_CLUSTER} per cluster engaged beyond four, at most ${MAX_SCALED_CONCURRENCY}`,
  qps: "500 per cluster engaged: it bounds the hub's own work, not an API server's",
  burst: "1000 per cluster engaged",
  clusterQps: "200: this limit protects each API server",
  maxObjectBytes: "4Mi, twice the JSON of the largest object etcd stores",
};

/** Each limit flag (without `--`) and the HubLimits key it sets. */
export const LIMIT_FLAGS: Record<string, LimitFlag> = {
  "concurrency": { key: "concurrency", scale: 1, integer: true, help: "reconciles running at once, all clusters" },
  "qps": { key: "qps", scale: 1, integer: false, help: "process-wide reconciles per second" },
  "burst": { key: "burst", scale: 1, integer: true, help: "process-wide reconcile burst" },
  "cluster-qps": { key: "clusterQps", scale: 1, integer: false, help: "API requests per second per cluster" },
  "cluster-burst": { key: "clusterBurst", scale: 1, integer: true, help: "API request burst per cluster" },
  "reconcile-timeout": {
    key: "reconcileTimeoutMs",
    scale: 1000,
    integer: false,
    help: "seconds before a reconcile is abandoned and retried",
  },
  "watch-idle-timeout": {
    key: "watchIdleTimeoutMs",
    scale: 1000,
    integer: false,
    help: "seconds of watch silence before the stream is reopened",
  },
  "request-timeout": { key: "requestTimeoutMs", scale: 1000, integer: false, help: "seconds per API request" },
  "drain-timeout": {
    key: "drainTimeoutMs",
    scale: 1000,
    integer: false,
    help: "seconds in-flight reconciles get on shutdown",
  },
  "max-retry-delay": {
    key: "maxRetryDelayMs",
    scale: 1000,
    integer: false,
    help: "cap of the per-object retry backoff, seconds",
  },
  "max-object-bytes": {
    key: "maxObjectBytes",
    scale: 1,
    integer: true,
    bytes: true,
    help: "largest response body or watch event kept (bytes, Ki, Mi, Gi)",
  },
};

const BYTE_SUFFIXES: Record<string, number> = { "": 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 };

/** A byte size such as `4194304`, `512Ki` or `4Mi`, or undefined when `raw` is not a positive whole one. */
export function parseByteSize(raw: string): number | undefined {
  const m = /^\s*(\d+)(Ki|Mi|Gi)?\s*$/.exec(raw);
  if (!m) return undefined;
  const n = Number(m[1]) * BYTE_SUFFIXES[m[2] ?? ""];
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** The limit flags' node:util parseArgs options (each a string, checked by parseLimits). */
export const LIMIT_OPTIONS: Record<string, { type: "string" }> = Object.fromEntries(
  Object.keys(LIMIT_FLAGS).map((k) => [k, { type: "string" as const }]),
);

/** The --help lines of the limit flags, each with its default. */
export function limitsHelp(): string[] {
  const d = DEFAULT_LIMITS;
  return Object.entries(LIMIT_FLAGS).map(([flag, f]) =>
    `  --${flag.padEnd(22)} ${f.help} (default ${DEFAULT_TEXT[f.key] ?? d[f.key] / f.scale})`
  );
}

/** Whether `--flag VALUE` is a limit flag followed by a negative number (node:util would call it ambiguous). */
export function isNegativeLimit(arg: string, next: string | undefined): boolean {
  return arg.startsWith("--") && arg.slice(2) in LIMIT_FLAGS && /^-\d/.test(next ?? "");
}

/** The limits given; throws FlagError naming the flag and the value when one is not a positive (whole) number. */
export function parseLimits(values: FlagValues): Partial<HubLimits> {
  const limits: Partial<HubLimits> = {};
  for (const [flag, f] of Object.entries(LIMIT_FLAGS)) {
    const raw = values[flag] as string | undefined;
    if (raw === undefined) continue;
    if (f.bytes) {
      const size = parseByteSize(raw);
      if (size === undefined) {
        throw new FlagError(
          `invalid --${flag} "${raw}": must be a positive whole number of bytes, optionally with Ki, Mi or Gi (e.g. 4Mi)`,
        );
      }
      limits[f.key] = size;
      continue;
    }
    const n = Number(raw);
    if (raw.trim() === "" || !Number.isFinite(n) || n <= 0 || (f.integer && !Number.isInteger(n))) {
      throw new FlagError(`invalid --${flag} "${raw}": must be a positive ${f.integer ? "whole " : ""}number`);
    }
    limits[f.key] = n * f.scale;
  }
  return limits;
}
