// Kopf's `--liveness http://HOST:PORT/PATH` flag: where /healthz, /readyz (and without a protected port /status and
// /metrics) are served, and its --help section. Pure.

import { FlagError } from "./flag_values.ts";

/** Where `--liveness` serves. */
export interface LivenessFlag {
  hostname: string;
  port: number;
  path: string;
}

/** The --help section of `--liveness`. */
export function livenessHelp(): string[] {
  return [
    "Health:",
    "  --liveness URL             serve /healthz, /readyz, /status and /metrics on URL's host and port,",
    "                             Kopf's form, e.g. http://0.0.0.0:8080/healthz. Default: not served",
    "                             (with --metrics-bind-address, only /healthz and /readyz stay here).",
    "                             /healthz fails only when the hub is wedged; /readyz is 200 once the home",
    "                             cluster and the clusters the command line names listed, and every",
    "                             cluster provider read its sources. Both name at most 50 clusters (a",
    "                             summary counts them all; /status has the details, one page at a time).",
    "                             Both ports close a connection whose request head takes over 10 s and",
    "                             hold at most 256 connections; bound to 127.0.0.1, ::1 or localhost they",
    "                             answer 421 to a Host that is not loopback (DNS rebinding)",
  ];
}

/** Parses Kopf's `--liveness http://HOST:PORT/PATH` form. */
export function parseLiveness(raw: string): LivenessFlag {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new FlagError(`invalid --liveness "${raw}": expected a URL like http://0.0.0.0:8080/healthz`);
  }
  if (url.protocol !== "http:") {
    throw new FlagError(`invalid --liveness "${raw}": only http:// is served, e.g. http://0.0.0.0:8080/healthz`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new FlagError(`invalid --liveness "${raw}": no credentials, query or fragment allowed`);
  }
  const port = url.port === "" ? 80 : Number(url.port);
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  return { hostname, port, path: url.pathname };
}
