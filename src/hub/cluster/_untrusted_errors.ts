// What /status and the logs show of an untrusted cluster's failures to connect: one generic reason, the detail at debug.

import { type LogFields, Logger, type LogLevel } from "../../util/mod.ts";
import type { ClusterHealth, OperatorHealth } from "../health/cluster_health.ts";

/**
 * The one reason /status and the logs above debug give for an untrusted cluster that cannot be reached, whatever the
 * cause (refused, timed out, reset, a TLS failure, a proxy's tunnel refused or its own error, a 5xx).
 */
export const CANNOT_CONNECT = "cannot connect to the cluster's server (the hub's debug log has the detail)";

/** The health state every connection failure maps to (failureStateOf): the only state whose errors are replaced. */
const UNREACHABLE = "unreachable";

/**
 * `h` with the detail of its connection failures replaced by CANNOT_CONNECT (a new entry; `h` is not changed).
 *
 * Guarantees: every operator in state `unreachable` shows CANNOT_CONNECT as its lastError, and so does the cluster
 * when its own lastError came from one of them or it is `unreachable` itself; other errors (missing permissions, a
 * missing CRD, a refused credential) stay as they are. So /status cannot tell a refused port from a filtered one, a
 * tunnel refused from a connection refused, or a TLS server from a plain one: a Secret's author cannot scan with it.
 */
export function withGenericConnectErrors(h: ClusterHealth): ClusterHealth {
  const replaced = new Set<string>();
  const operators: Record<string, OperatorHealth> = {};
  for (const [name, o] of Object.entries(h.operators ?? {})) {
    if (o.state === UNREACHABLE && o.lastError !== null) {
      replaced.add(o.lastError);
      operators[name] = { ...o, lastError: CANNOT_CONNECT };
    } else operators[name] = o;
  }
  const lastError = h.lastError !== null && (replaced.has(h.lastError) || h.state === UNREACHABLE)
    ? CANNOT_CONNECT
    : h.lastError;
  return { ...h, lastError, operators };
}

/** The one reason the `admission` section gives for an untrusted cluster whose webhook configurations failed to sync. */
export const CANNOT_SYNC_WEBHOOKS =
  "cannot sync the webhook configurations in this cluster (the hub's debug log has the detail)";

/**
 * The `admission` section of health with the installer's `lastError` of every untrusted cluster replaced by
 * CANNOT_SYNC_WEBHOOKS (a new section when one is replaced; the installer's own state is not changed). Its errors are
 * mostly the cluster's server failing to answer, which must not tell a scanner more than `unreachable` does; missing
 * RBAC shows in the cluster's pre-flight anyway.
 */
export function withGenericAdmissionErrors(
  admission: Record<string, unknown>,
  untrusted: (cluster: string) => boolean,
): Record<string, unknown> {
  const clusters = admission.clusters;
  if (!clusters || typeof clusters !== "object") return admission;
  let out: Record<string, unknown> | undefined;
  for (const [name, c] of Object.entries(clusters as Record<string, unknown>)) {
    const error = (c as { lastError?: unknown } | null)?.lastError;
    if (typeof error !== "string" || !untrusted(name)) continue;
    out ??= { ...clusters as Record<string, unknown> };
    out[name] = { ...c as Record<string, unknown>, lastError: CANNOT_SYNC_WEBHOOKS };
  }
  return out ? { ...admission, clusters: out } : admission;
}

/**
 * A logger for an untrusted cluster: a line that carries an `error` with `phase` or `state` `unreachable` (a watch that
 * failed, a pre-flight that failed) is written with CANNOT_CONNECT as its error, and the detail goes to a debug line
 * of the same message written just before it. Every other line passes unchanged; children keep the rule.
 */
export function connectDetailAtDebug(logger: Logger): Logger {
  return new ConnectDetailAtDebug(logger);
}

class ConnectDetailAtDebug extends Logger {
  readonly #inner: Logger;

  constructor(inner: Logger) {
    super({ write: () => {} });
    this.#inner = inner;
  }

  override child(fields: LogFields): Logger {
    return new ConnectDetailAtDebug(this.#inner.child(fields));
  }

  override enabled(level: LogLevel): boolean {
    return this.#inner.enabled(level);
  }

  override debug(msg: string, fields?: LogFields): void {
    this.#inner.debug(msg, fields);
  }

  override info(msg: string, fields?: LogFields): void {
    this.#line("info", msg, fields);
  }

  override warn(msg: string, fields?: LogFields): void {
    this.#line("warn", msg, fields);
  }

  override error(msg: string, fields?: LogFields): void {
    this.#line("error", msg, fields);
  }

  #line(level: Exclude<LogLevel, "debug">, msg: string, fields: LogFields | undefined): void {
    const connect = fields !== undefined && fields.error !== undefined && fields.error !== null &&
      (fields.phase === UNREACHABLE || fields.state === UNREACHABLE);
    if (!connect) {
      this.#inner[level](msg, fields);
      return;
    }
    this.#inner.debug(msg, fields);
    this.#inner[level](msg, { ...fields, error: CANNOT_CONNECT });
  }
}
