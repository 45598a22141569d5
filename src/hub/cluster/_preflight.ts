// One operator's pre-flight in one cluster: discovery and RBAC checks, retried with backoff until they pass.

import {
  describePermission,
  discoverResource,
  failureStateOf,
  type KubeClient,
  missingPermissions,
  missingPermissionsIn,
  type PermissionCheck,
  retryAfterMsOf,
} from "../../kube/mod.ts";
import { type ApiClient, permissionsFor } from "../../runtime/mod.ts";
import { Backoff, type Clock, errorText, type Logger, oneLine, type Semaphore } from "../../util/mod.ts";
import type { Slot } from "./_cluster_slot.ts";
import type { FirstRulesReview } from "./_first_rules.ts";

/** The cluster a pre-flight runs in. */
export interface PreflightContext {
  /** The cluster's name, as reconcilers see it. */
  cluster: string;
  /** Discovery goes through the cluster's budget (see EngagedClusterOptions.apiBudget). */
  api: ApiClient;
  /** Access reviews go straight to the cluster. */
  client: KubeClient;
  /** The namespaces checked; empty means all. */
  namespaces: readonly string[];
  /**
   * The one namespace whose checks a rules review answers (a namespaced cluster's, or the hub's only watched
   * namespace), and that review, shared by its operators' first attempts.
   */
  scope?: { namespace: string; firstRules: FirstRulesReview };
  /** Permissions checked besides the operator's own (e.g. the leader-election Lease's). */
  extraPermissions?: readonly PermissionCheck[];
  /** Each attempt holds a permit (see EngagedClusterOptions.preflightGate). */
  gate?: Semaphore;
  /**
   * Called once, when the first attempt holds its permit and its first request goes out: the engaged cluster starts
   * the operator's list then, so the list runs while the checks do (their answer cannot change what is listed).
   */
  onFirstAttempt?: () => void;
  /** Called after every attempt that did not pass (forbidden, missing CRD, a failure), before its backoff. */
  onFailedAttempt?: () => void;
  clock: Clock;
  log: Logger;
}

/**
 * Discovery and RBAC checks of one operator, retried with backoff until they pass (true) or `signal` aborts (false).
 *
 * Guarantees: `slot.preflight` shows every attempt: `connecting` from the first one, then the failure's state,
 * error and missing permissions until one passes; `slot.info` holds the discovered resource (only where the operator
 * owns its resource here); a server's Retry-After is believed within 1 to 30 s, else the backoff runs from 1 to 30 s;
 * the gate's permit is held only while an attempt runs; `onFirstAttempt` is called once, as the first attempt starts
 * (its permit held), and `onFailedAttempt` after each attempt that did not pass, before its backoff; a failure is
 * logged at error when its state or error differs from the attempt before's, else at debug.
 */
export async function preflight(slot: Slot, ctx: PreflightContext, signal: AbortSignal): Promise<boolean> {
  const backoff = new Backoff({ initialMs: 1000, maxMs: 30_000 });
  const p = slot.preflight!;
  const op = slot.operator;
  const { cluster, scope } = ctx;
  let lastSaid: string | undefined;
  while (!signal.aborted) {
    let retryAfterMs: number | undefined;
    p.attempts++;
    if (p.state === "registering") p.state = "connecting"; // registered until the first attempt

    let release: (() => void) | undefined;
    try {
      release = await ctx.gate?.acquire(signal);
      if (p.attempts === 1) ctx.onFirstAttempt?.();
      if (slot.owns) Object.assign(slot.info, await discoverResource(ctx.api, cluster, op.resource, signal));
      const checks = [
        ...permissionsFor(op, {
          statusSubresource: slot.info.statusSubresource,
          namespaces: ctx.namespaces,
          cluster,
        }),
        ...(ctx.extraPermissions ?? []),
      ];
      // A namespaced cluster asks for its namespace's rules once instead of one review per check, and its
      // operators' first attempts share that one review.
      const first = p.attempts === 1;
      const missing = scope
        ? await missingPermissionsIn(
          ctx.client,
          scope.namespace,
          checks,
          signal,
          (s) => scope.firstRules.rules(first, s),
        )
        : await missingPermissions(ctx.client, checks, signal);
      if (missing.length === 0) return true;
      p.state = "forbidden";
      p.missing = missing.map(describePermission);
      p.error = `operator ${op.name} is missing RBAC permissions: ${p.missing.join("; ")}`;
    } catch (err) {
      if (signal.aborted) break;
      p.state = failureStateOf(err);
      p.missing = [];
      // One line: the error can quote a cluster name an untrusted source gave (a newline in it).
      p.error = oneLine(errorText(err));
      retryAfterMs = retryAfterMsOf(err);
    } finally {
      release?.();
      if (p.attempts === 1) scope?.firstRules.firstAttemptEnded();
    }
    ctx.onFailedAttempt?.();
    // A server that says when to come back (429/503 Retry-After while it starts) is believed, within bounds.
    const delay = retryAfterMs === undefined
      ? backoff.next(ctx.clock.now())
      : Math.min(30_000, Math.max(1000, retryAfterMs));
    // Written when the failure changes; the same failure again goes to debug (one line per cause, not per attempt).
    const fields = { operator: op.name, state: p.state, error: p.error, retryInMs: delay };
    const said = `${p.state}\u0000${p.error}`;
    if (said !== lastSaid) ctx.log.error("cluster pre-flight failed", fields);
    else ctx.log.debug("cluster pre-flight failed", fields);
    lastSaid = said;
    await ctx.clock.sleep(delay, signal);
  }
  return false;
}
