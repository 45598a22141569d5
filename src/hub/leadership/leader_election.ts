// Leader election on one coordination.k8s.io/v1 Lease, with client-go's algorithm and controller-runtime's defaults.

import { httpStatusOf } from "../../kube/mod.ts";
import type { ApiClient } from "../../runtime/mod.ts";
import { type Clock, errorText, type Logger, SystemClock } from "../../util/mod.ts";
import { LeaseClient, type LeaseSpec, microTime } from "./leases.ts";

export { type LeaseSpec, microTime } from "./leases.ts";

/**
 * Which Lease a replica campaigns for, as whom, and with what timing (client-go's LeaderElectionConfig).
 *
 * @example
 * ```ts
 * import type { ClusterAccess, HubLeaderElection, LeaseSettings } from "../../../hub.ts";
 *
 * declare const prod: ClusterAccess;
 * const lease: LeaseSettings = {
 *   namespace: "operator-hub",
 *   name: "operator-hub-leader",
 *   identity: `${Deno.hostname()}_${crypto.randomUUID()}`,
 *   leaseDurationMs: 30_000,
 *   renewDeadlineMs: 20_000,
 * };
 * const leaderElection: HubLeaderElection = { ...lease, cluster: "prod", access: prod };
 * ```
 */
export interface LeaseSettings {
  /** The Lease's namespace. */
  namespace: string;
  /** The Lease's name (`--leader-elect-id`). */
  name: string;
  /** This candidate's identity, unique per process (controller-runtime: hostname + "_" + a UUID). */
  identity: string;
  /** How long a standby waits, after it last saw the Lease change, before it takes over. Default 15 s. */
  leaseDurationMs?: number;
  /** How long the leader keeps retrying a failed renewal before it stops leading. Default 10 s. */
  renewDeadlineMs?: number;
  /** Pause between attempts to acquire or renew. Default 2 s. */
  retryPeriodMs?: number;
}

export interface LeaderElectorOptions extends LeaseSettings {
  /** A client for the cluster that holds the Lease. Needs leases get, create and update in `namespace`. */
  api: ApiClient;
  /** Acquire attempts wait retryPeriod × (1 + random × jitter). Default 1.2 (client-go's JitterFactor). */
  jitter?: number;
  /** On `start`'s signal, hand the Lease back so a standby takes over at once. Default true. */
  releaseOnCancel?: boolean;
  clock?: Clock;
  random?: () => number;
  logger: Logger;
  onStartedLeading?(): void;
  /** Called when leadership ends for any reason: lost renewal, someone else took the Lease, or shutdown. */
  onStoppedLeading?(): void;
  /** Called whenever the observed holder changes (including to this identity). */
  onNewLeader?(identity: string): void;
}

/**
 * What health and metrics show about one elector.
 *
 * @example
 * ```ts
 * import type { Hub, LeaderElectionSnapshot } from "../../../hub.ts";
 *
 * declare const hub: Hub;
 * const le: LeaderElectionSnapshot | undefined = hub.health().leaderElection;
 * if (le && !le.leader) console.log(`standby of ${le.lease}: ${le.holder ?? "nobody"} leads (${le.transitions} changes)`);
 * ```
 */
export interface LeaderElectionSnapshot {
  /** `namespace/name` of the Lease. */
  lease: string;
  /** This replica's identity. */
  identity: string;
  /** True while this replica holds the Lease. */
  leader: boolean;
  /** The holder last observed, or null when the Lease is free or not read yet. */
  holder: string | null;
  /** The Lease's leaseTransitions as last observed. */
  transitions: number;
  /** The last failure to read or write the Lease, or null. */
  lastError: string | null;
}

/**
 * Elects one leader among candidates sharing a Lease.
 *
 * Guarantees:
 * - this candidate reports `isLeader` only after its own create or update of the Lease succeeded
 *   (optimistic concurrency on resourceVersion, so two candidates never both succeed for one version);
 * - a candidate takes over only after it saw the Lease unchanged for the holder's leaseDurationSeconds,
 *   measured on its own clock from when it observed the record (client-go's rule, immune to clock skew);
 * - the leader stops leading (and calls `onStoppedLeading`) when it could not renew for `renewDeadlineMs`,
 *   which is shorter than the lease duration, so it stops before anyone may take over;
 * - every API request is bounded by the time left before the renew deadline, so a hung request
 *   cannot keep a stale leader leading;
 * - a leader that lost the Lease becomes a candidate again; `start` settles only after `signal`
 *   aborts and, with `releaseOnCancel`, the Lease was handed back (best effort, bounded by the retry period).
 *
 * Assumptions: candidates' clocks run at about the same rate (not the same time); the lease duration
 * exceeds the renew deadline, which exceeds retryPeriod × jitter (src/cli/flags/parse_flags.ts checks this).
 * One elector per Lease: the hub uses one Lease in its home cluster, and per-cluster Leases (one
 * elector each, gating only its cluster) are the planned sharding design.
 */
export class LeaderElector {
  readonly lease: string;
  readonly identity: string;
  readonly #o: LeaderElectorOptions;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #leaseMs: number;
  readonly #renewMs: number;
  readonly #retryMs: number;
  readonly #leases: LeaseClient;
  #leading = false;
  #observed: { spec: LeaseSpec; key: string; at: number } | undefined;
  #holder: string | null = null;
  #lastError: string | null = null;

  constructor(options: LeaderElectorOptions) {
    this.#o = options;
    this.#clock = options.clock ?? new SystemClock();
    this.#random = options.random ?? Math.random;
    this.#leaseMs = options.leaseDurationMs ?? 15_000;
    this.#renewMs = options.renewDeadlineMs ?? 10_000;
    this.#retryMs = options.retryPeriodMs ?? 2_000;
    this.identity = options.identity;
    this.lease = `${options.namespace}/${options.name}`;
    this.#leases = new LeaseClient(options.api, options.namespace);
  }

  /** True while this candidate holds the Lease. */
  get isLeader(): boolean {
    return this.#leading;
  }

  snapshot(): LeaderElectionSnapshot {
    return {
      lease: this.lease,
      identity: this.identity,
      leader: this.#leading,
      holder: this.#holder,
      transitions: this.#observed?.spec.leaseTransitions ?? 0,
      lastError: this.#lastError,
    };
  }

  /** Campaigns, leads and campaigns again until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    const log = this.#o.logger;
    log.info("leader election started", { lease: this.lease, identity: this.identity });
    while (!signal.aborted) {
      if (!(await this.#acquire(signal))) break;
      this.#setLeading(true);
      await this.#renewWhileLeading(signal);
      if (signal.aborted) {
        if (this.#o.releaseOnCancel ?? true) await this.#release();
        this.#setLeading(false);
        break;
      }
      this.#setLeading(false);
    }
    log.info("leader election stopped", { lease: this.lease });
  }

  /** Tries until this candidate holds the Lease; false when `signal` aborted first. */
  async #acquire(signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      if (await this.#tryAcquireOrRenew(this.#retryMs * 2, signal)) return true;
      let wait = this.#retryMs * (1 + this.#random() * (this.#o.jitter ?? 1.2));
      // Wake up right when the observed Lease would expire instead of up to a jittered period later.
      const o = this.#observed;
      if (o && o.spec.holderIdentity && o.spec.holderIdentity !== this.identity) {
        const expiresIn = o.at + (o.spec.leaseDurationSeconds ?? this.#leaseMs / 1000) * 1000 - this.#clock.now();
        if (expiresIn >= 0 && expiresIn < wait) wait = expiresIn + 1;
      }
      await this.#clock.sleep(wait, signal);
    }
    return false;
  }

  /** Renews every retry period; returns when a renewal missed the deadline, someone else took over, or on abort. */
  async #renewWhileLeading(signal: AbortSignal): Promise<void> {
    let lastRenew = this.#clock.now();
    while (!signal.aborted) {
      await this.#clock.sleep(this.#retryMs, signal);
      if (signal.aborted) return;
      for (;;) {
        const left = lastRenew + this.#renewMs - this.#clock.now();
        if (left <= 0) {
          this.#o.logger.error("failed to renew the leader-election lease in time; stopping leading", {
            lease: this.lease,
            renewDeadlineMs: this.#renewMs,
            error: this.#lastError,
          });
          return;
        }
        if (await this.#tryAcquireOrRenew(left, signal)) {
          lastRenew = this.#clock.now();
          break;
        }
        if (signal.aborted) return;
        if (this.#holder !== null && this.#holder !== this.identity) {
          this.#o.logger.error("the leader-election lease was taken over; stopping leading", {
            lease: this.lease,
            holder: this.#holder,
          });
          return;
        }
        await this.#clock.sleep(Math.min(this.#retryMs, left), signal);
        if (signal.aborted) return;
      }
    }
  }

  /** client-go's tryAcquireOrRenew: one read and at most one write, bounded by `budgetMs`. */
  async #tryAcquireOrRenew(budgetMs: number, signal: AbortSignal): Promise<boolean> {
    const { signal: bounded, done } = this.#deadline(budgetMs, signal);
    const now = () => microTime(this.#clock.now());
    try {
      const current = await this.#leases.get(this.#o.name, bounded);
      if (!current) {
        const spec: LeaseSpec = {
          holderIdentity: this.identity,
          leaseDurationSeconds: Math.round(this.#leaseMs / 1000),
          acquireTime: now(),
          renewTime: now(),
          leaseTransitions: 0,
        };
        const created = await this.#leases.create(this.#o.name, spec, {}, bounded);
        this.#observe(created?.spec ?? spec);
        this.#lastError = null;
        return true;
      }
      const old = current.spec ?? {};
      this.#observe(old);
      const held = !!old.holderIdentity && old.holderIdentity !== this.identity;
      const durationMs = (old.leaseDurationSeconds ?? this.#leaseMs / 1000) * 1000;
      if (held && this.#observed!.at + durationMs > this.#clock.now()) {
        this.#lastError = null;
        return false;
      }
      const mine = old.holderIdentity === this.identity;
      const spec: LeaseSpec = {
        holderIdentity: this.identity,
        leaseDurationSeconds: Math.round(this.#leaseMs / 1000),
        acquireTime: mine && old.acquireTime ? old.acquireTime : now(),
        renewTime: now(),
        leaseTransitions: (old.leaseTransitions ?? 0) + (mine ? 0 : 1),
      };
      const updated = await this.#leases.update(current, spec, bounded);
      this.#observe(updated?.spec ?? spec);
      this.#lastError = null;
      return true;
    } catch (err) {
      if (signal.aborted) return false;
      const code = httpStatusOf(err);
      // 409: another candidate wrote first (create or update); the next read shows who.
      this.#lastError = code === 409 ? null : errorText(err);
      if (code !== 409) {
        this.#o.logger.warn("leader-election lease request failed", { lease: this.lease, error: this.#lastError });
      }
      return false;
    } finally {
      done();
    }
  }

  /** Hands the Lease back (client-go's release): empty holder, 1 s duration. Best effort. */
  async #release(): Promise<void> {
    const { signal, done } = this.#deadline(this.#retryMs, undefined);
    try {
      const current = await this.#leases.get(this.#o.name, signal);
      if (!current || current.spec?.holderIdentity !== this.identity) return;
      const at = microTime(this.#clock.now());
      await this.#leases.update(current, {
        holderIdentity: "",
        leaseDurationSeconds: 1,
        acquireTime: at,
        renewTime: at,
        leaseTransitions: current.spec.leaseTransitions ?? 0,
      }, signal);
      this.#holder = null;
      this.#o.logger.info("released the leader-election lease", { lease: this.lease });
    } catch (err) {
      this.#o.logger.warn("could not release the leader-election lease; a standby takes over when it expires", {
        lease: this.lease,
        error: errorText(err),
      });
    } finally {
      done();
    }
  }

  #observe(spec: LeaseSpec): void {
    const key = JSON.stringify([
      spec.holderIdentity ?? "",
      spec.leaseDurationSeconds ?? 0,
      spec.acquireTime ?? "",
      spec.renewTime ?? "",
      spec.leaseTransitions ?? 0,
    ]);
    if (this.#observed?.key !== key) {
      this.#observed = { spec, key, at: this.#clock.now() };
    }
    const holder = spec.holderIdentity || null;
    if (holder !== this.#holder) {
      this.#holder = holder;
      if (holder) {
        this.#o.logger.info("new leader observed", { lease: this.lease, holder, self: holder === this.identity });
        this.#o.onNewLeader?.(holder);
      }
    }
  }

  #setLeading(leading: boolean): void {
    if (leading === this.#leading) return;
    this.#leading = leading;
    if (leading) {
      this.#o.logger.info("became leader", { lease: this.lease, identity: this.identity });
      this.#o.onStartedLeading?.();
    } else {
      this.#o.logger.info("stopped leading", { lease: this.lease, identity: this.identity });
      this.#o.onStoppedLeading?.();
    }
  }

  /** A signal that aborts after `ms` on the injected clock, or with `parent`. */
  #deadline(ms: number, parent: AbortSignal | undefined): { signal: AbortSignal; done(): void } {
    const ac = new AbortController();
    const timer = this.#clock.setTimer(ms, () => ac.abort(new DOMException("lease request timed out", "TimeoutError")));
    const onParent = () => ac.abort(parent?.reason);
    parent?.addEventListener("abort", onParent, { once: true });
    if (parent?.aborted) ac.abort(parent.reason);
    return {
      signal: ac.signal,
      done: () => {
        timer.cancel();
        parent?.removeEventListener("abort", onParent);
      },
    };
  }
}
