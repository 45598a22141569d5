// The registered set: what every provider offers, turned into engage / disengage / credential swaps, with collisions.

import type * as prom from "../../util/prometheus.ts";
import type { ClusterAccess } from "../../kube/mod.ts";
import { type Clock, errorText, type Logger, oneLine, SystemClock } from "../../util/mod.ts";
import type { ProviderHealth } from "../health/cluster_health.ts";
import type { ClusterRegistration, RegistrationProblem } from "../health/hub_health.ts";
import { Offers, type Selection, type Source } from "./_offers.ts";
import { providerHealth, type UnusableSource } from "./_provider_health.ts";
import { registerRegistryMetrics } from "./_registry_metrics.ts";
import { SwappableAccess } from "./swappable_access.ts";
import { SyncPump } from "./_sync_pump.ts";
import { EngageSpacing } from "./_engage_spacing.ts";
import { RegistryLog } from "./_registry_log.ts";
import { type NamePrefixes, prefixedName } from "./name_prefixes.ts";
import { type ClusterOffer, type ProviderName, PROVIDERS, type ProviderWatch } from "./cluster_offer.ts";

/** What the registry drives; the Hub fits. */
export interface EngageTarget {
  engage(name: string, access: ClusterAccess, registration: ClusterRegistration): Promise<void>;
  disengage(name: string): Promise<void>;
  hold(name: string, problem: RegistrationProblem | undefined): void;
  /** After `disengage` of a name that left the registry (every source of it gone; not a hold): `--cleanup-on-remove`. */
  removed?(name: string, access: ClusterAccess): Promise<void>;
  /** Shows the providers' own health (the Hub's `providers` section of /status). */
  showProviders?(read: () => Record<string, ProviderHealth>): void;
}

export interface ClusterRegistryOptions {
  /** `all` (everything registered, now and later) or the names `--clusters` selected. */
  selection: "all" | readonly string[];
  /** Names engaged or disengaged at once. Default 8. */
  concurrency?: number;
  /** Appended to "selected but not registered" errors: where a user registers a cluster. */
  howToRegister?: string;
  /**
   * `--cluster-name-prefix`: each provider's prefix, put before every name its untrusted sources offer (never before
   * the command line's names), so providers run side by side without colliding. Default: none.
   */
  prefixes?: NamePrefixes;
  /**
   * The least time between two engages of one name, in ms: a source that changes faster than its cluster can be
   * engaged (a Secret rewritten many times a second) re-engages at most this often, with its latest version. 0 turns
   * it off. Default {@linkcode DEFAULT_REENGAGE_INTERVAL_MS}.
   */
  reengageIntervalMs?: number;
  clock?: Clock;
  logger: Logger;
}

/** The default least time between two engages of one cluster name (see ClusterRegistryOptions.reengageIntervalMs). */
export const DEFAULT_REENGAGE_INTERVAL_MS = 3_000;

/** A selected name that would not be served at start-up, and why. */
export interface StartProblem {
  name: string;
  error: string;
  /** Whether some source offers it (else `--clusters` named it and nobody registers it). */
  registered: boolean;
  /** Whether only untrusted sources (Secrets, dropped files) offer it: their problems never stop the hub. */
  untrusted: boolean;
}

/** One registered name as it is served now. */
export interface RegisteredCluster {
  name: string;
  provider: ProviderName;
  /** The file or `namespace/name` of the Secret. */
  source: string;
  registeredAt: string;
  /** Credential swaps since it was engaged. */
  credentialSwaps: number;
}

interface Served {
  provider: ProviderName;
  source: string;
  endpointDigest: string;
  credentialsDigest: string;
  access: SwappableAccess;
  registeredAt: string;
}

/**
 * Resolves every provider's offers to one cluster per name and keeps the target in step.
 *
 * Guarantees:
 * - a name the command line defines (`in-cluster`, a context of a `--kubeconfig` file or of $KUBECONFIG) is reserved:
 *   a Secret or a dropped file offering it is ignored, logged and counted in `hub_cluster_name_collisions`, and the
 *   command line's cluster keeps serving;
 * - otherwise, among untrusted sources (a file and a Secret, two Secrets), the first to register a name keeps serving it;
 *   a later one is ignored, logged, listed in its provider's errors naming the holder and counted as a `duplicate`,
 *   and gets the name once the first goes: a Secret can never disengage a cluster another source registered;
 * - a name two command-line files define, or one source defines twice, is served by none of them and shows
 *   `registering` with an error naming every source, whatever the order they were read in;
 * - an offer whose server, CA, TLS settings, proxy and namespace are unchanged but whose credentials changed is
 *   swapped into the served access in place (no disengage, no relist); anything else that changes re-engages;
 * - names are synced in parallel, at most `concurrency` at once and one sync per name at a time; engaging never
 *   waits for a cluster to answer (the Hub's workers connect in the background), so a slow cluster delays nothing;
 * - a name `--clusters` selected explicitly is always shown: `registering` while no source offers it;
 * - a provider given a prefix (`prefixes`) has every name its untrusted sources offer registered with the prefix
 *   before it, here, where offers enter, so no provider needs code of its own for it; the command line's names (the
 *   `flag` provider, `in-cluster`, the contexts of `--kubeconfig` files) are never prefixed and stay reserved, and
 *   every rule above applies to the prefixed names;
 * - engages of one name are at least `reengageIntervalMs` apart: a change that comes sooner waits (the version served
 *   keeps serving), changes meanwhile coalesce, and the latest is engaged once the interval has passed, with one log
 *   line for the burst; withdrawals, holds and in-place credential swaps never wait.
 */
export class ClusterRegistry {
  #target: EngageTarget | undefined;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #selection: Selection;
  readonly #prefixes: NamePrefixes;
  readonly #offers = new Offers();
  readonly #served = new Map<string, Served>();
  readonly #held = new Set<string>();
  readonly #pump: SyncPump;
  readonly #spacing: EngageSpacing;
  /** Per-name lines, each message rate-limited and summarised. */
  readonly #notes: RegistryLog;
  /** Each provider's own watch, as it reports it. */
  readonly #watches = new Map<ProviderName, () => ProviderWatch>();
  /** `provider\0source` → why that source offers nothing (a file that does not parse, a Secret that cannot be read). */
  readonly #unusable = new Map<string, UnusableSource>();

  constructor(options: ClusterRegistryOptions) {
    this.#clock = options.clock ?? new SystemClock();
    this.#log = options.logger;
    const names = options.selection === "all" ? "all" : new Set(options.selection);
    this.#selection = { names, howToRegister: options.howToRegister };
    this.#prefixes = options.prefixes ?? {};
    this.#pump = new SyncPump((name) => this.#sync(name), {
      concurrency: options.concurrency ?? 8,
      onError: (name, err) => this.#log.error("cluster registration failed", { cluster: name, error: errorText(err) }),
    });
    this.#notes = new RegistryLog(this.#log, this.#clock);
    this.#spacing = new EngageSpacing({
      intervalMs: options.reengageIntervalMs ?? DEFAULT_REENGAGE_INTERVAL_MS,
      clock: this.#clock,
      due: (name) => this.#pump.mark(name),
    });
    if (names !== "all") { for (const name of names) this.#pump.mark(name); }
  }

  /** Starts driving `target`: everything offered so far is synced now, later offers as they come. */
  connect(target: EngageTarget): void {
    this.#target = target;
    target.showProviders?.(() => this.providerHealth());
    // What was offered before (the start-up read) is logged now: start-up errors that stop the hub stay one line.
    for (const s of this.#offers.sources()) for (const name of s.offers.keys()) this.#report(name, s);
    this.#pump.enable();
  }

  /** Makes `provider` appear in `providerHealth()`, its watch described by `watch`. */
  attach(provider: ProviderName, watch: () => ProviderWatch): void {
    this.#watches.set(provider, watch);
  }

  /**
   * Records that `source` cannot be used at all (its text does not parse, it cannot be read), or clears it with
   * `undefined`. What it offered before stays as it was; the error is shown in its provider's health entry.
   */
  unusable(provider: ProviderName, source: string, error: string | undefined): void {
    const key = `${provider}\u0000${source}`;
    if (error === undefined) this.#unusable.delete(key);
    else this.#unusable.set(key, { provider, source, error });
  }

  /**
   * Every attached provider's health: its watch, the clusters it serves, and each of its sources that cannot be used
   * (unusable sources, broken offers, names it shares with another source). Messages name sources, never content.
   */
  providerHealth(): Record<string, ProviderHealth> {
    return providerHealth({
      order: PROVIDERS,
      watches: this.#watches,
      served: this.#served.values(),
      unusable: this.#unusable.values(),
      offers: this.#offers,
      resolve: (name) => this.#offers.resolve(name, this.#selection),
    });
  }

  /**
   * Where the selected names stand now, before anything is engaged: what would be served and what not, and why.
   * main.ts turns problems at start-up into exit code 2.
   */
  check(): { serving: ClusterAccess[]; problems: StartProblem[] } {
    const names = this.#selection.names === "all" ? this.#offers.names() : [...this.#selection.names];
    const serving: ClusterAccess[] = [];
    const problems: StartProblem[] = [];
    for (const name of names) {
      const want = this.#offers.resolve(name, this.#selection);
      if (want.kind === "serve") serving.push(want.offer.access);
      else if (want.kind === "hold") {
        problems.push({
          name,
          error: want.problem.error,
          registered: this.#offers.claims(name) > 0,
          untrusted: this.#offers.claims(name) > 0 && !this.#offers.trusted(name),
        });
      }
    }
    return { serving, problems };
  }

  /** Every name some source offers, sorted. */
  names(): string[] {
    return this.#offers.names();
  }

  /**
   * Replaces everything `source` of `provider` offers. `trusted` (default: only the `flag` provider) says the
   * command line defines the source (a `--kubeconfig` file): its names are reserved against untrusted sources.
   * Each offer that cannot be used, or that takes a reserved name, is logged once when that changes (offers made
   * before `connect()` are logged by it, so a start-up that exits 2 prints only its one error line).
   */
  offer(provider: ProviderName, source: string, offers: ClusterOffer[], trusted?: boolean): void {
    const named = offers.map((o) => {
      const name = prefixedName(this.#prefixes, provider, trusted ?? provider === "flag", o.name);
      return name === o.name ? o : { ...o, name };
    });
    // The offers are updated before any name is marked: a sync reads them as soon as it is marked.
    const changed = this.#offers.offer(provider, source, named, trusted);
    const mine = this.#offers.source(provider, source);
    for (const name of changed) {
      if (mine && this.#target) this.#report(name, mine);
      this.#pump.mark(name);
    }
  }

  /** One log line for an offer that cannot be used or takes a name it may not have; nothing for a usable one. */
  #report(name: string, s: Source): void {
    const o = s.offers.get(name);
    if (!o) return;
    const fields = { cluster: name, provider: s.provider, source: s.source };
    if (this.#offers.reservedError(name, s)) this.#notes.note("reserved", name, fields);
    else if (this.#offers.shadowedError(name, s)) this.#notes.note("shadowed", name, fields);
    else if (o.error) this.#notes.note("notUsable", name, { ...fields, error: o.error });
  }

  /** Everything `source` of `provider` offered is gone (file deleted, Secret deleted). */
  withdraw(provider: ProviderName, source: string): void {
    this.offer(provider, source, []);
  }

  /** Names served now, sorted. */
  registered(): RegisteredCluster[] {
    return [...this.#served].sort(([a], [b]) => a.localeCompare(b)).map(([name, s]) => ({
      name,
      provider: s.provider,
      source: s.source,
      registeredAt: s.registeredAt,
      credentialSwaps: s.access.swaps,
    }));
  }

  /** Resolves once every pending sync finished (tests and the start-up path use it). */
  idle(): Promise<void> {
    return this.#pump.idle();
  }

  /**
   * Adds `hub_clusters_registered{provider}`, `hub_cluster_name_collisions{reason}` and
   * `hub_cluster_offers_refused{provider,reason}` to a Prometheus registry: label values from fixed sets, never a
   * cluster's name, so what strangers offer cannot add series.
   */
  registerMetrics(registry: prom.MetricRegistry): void {
    registerRegistryMetrics(registry, { served: this.#served, offers: this.#offers, unusable: this.#unusable });
  }

  /** Syncs until `signal` aborts, then waits for syncs in flight. The target's own stop disengages the clusters. */
  async start(signal: AbortSignal): Promise<void> {
    if (!signal.aborted) await new Promise<void>((r) => signal.addEventListener("abort", () => r(), { once: true }));
    await this.#pump.stop();
    this.#spacing.stop();
    this.#notes.flush();
  }

  async #sync(name: string): Promise<void> {
    if (this.#pump.stopped) return;
    const want = this.#offers.resolve(name, this.#selection);
    const cur = this.#served.get(name);
    const target = this.#target!;
    if (want.kind === "serve") {
      const { offer, provider, source } = want;
      if (cur && cur.provider === provider && cur.endpointDigest === offer.endpointDigest) {
        if (cur.credentialsDigest !== offer.credentialsDigest) {
          cur.access.swap(offer.access);
          cur.credentialsDigest = offer.credentialsDigest;
          this.#notes.note("swapped", name, { cluster: name, provider, source });
        }
        cur.source = source;
        return;
      }
      // Engaged too recently: the version served keeps serving, the latest is engaged once the interval has passed.
      if (this.#spacing.wait(name) > 0) {
        this.#spacing.defer(name);
        // Another source has the name now: what the one before offered is not served while the new one waits.
        if (cur && (cur.provider !== provider || cur.source !== source)) {
          this.#served.delete(name);
          await target.disengage(name);
          this.#notes.note("unregistered", name, { cluster: name, provider: cur.provider, source: cur.source });
        }
        return;
      }
      const deferred = this.#spacing.engaged(name);
      const registeredAt = new Date(this.#clock.now()).toISOString();
      const access = new SwappableAccess(name, offer.access);
      this.#served.set(name, {
        provider,
        source,
        endpointDigest: offer.endpointDigest,
        credentialsDigest: offer.credentialsDigest,
        access,
        registeredAt,
      });
      this.#held.delete(name);
      await target.engage(name, access, {
        provider,
        registeredAt,
        ...(offer.condition ? { condition: offer.condition } : {}),
      });
      this.#notes.note(cur ? "reregistered" : "registered", name, {
        cluster: name,
        provider,
        source,
        // A burst of changes faster than the cluster could be engaged: this one line stands for all of them.
        ...(deferred > 0 ? { changesCoalesced: deferred, reengageIntervalMs: this.#spacing.intervalMs } : {}),
      });
      return;
    }
    if (cur) {
      this.#served.delete(name);
      await target.disengage(name);
      if (want.kind === "none") await target.removed?.(name, cur.access);
      this.#notes.note("unregistered", name, { cluster: name, provider: cur.provider, source: cur.source });
    }
    if (want.kind === "hold") {
      this.#held.add(name);
      target.hold(name, { ...want.problem, error: oneLine(want.problem.error) });
      this.#notes.note("notServed", name, { cluster: name, error: want.problem.error });
    } else if (this.#held.delete(name)) {
      target.hold(name, undefined);
    }
  }
}
