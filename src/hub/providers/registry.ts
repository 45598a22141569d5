// The registered set: what every provider offers, turned into engage / disengage / credential swaps, with collisions.

import client from "prom-client";
import type { ClusterAccess } from "../../kube/mod.ts";
import { type Clock, errorText, type Logger, SystemClock } from "../../util/mod.ts";
import type { ProviderHealth } from "../cluster_health.ts";
import type { ClusterRegistration, RegistrationProblem } from "../hub.ts";
import { SwappableAccess } from "./swappable_access.ts";

/** Where a registration came from: `--clusters` at start, a kubeconfig file, a labelled Secret. */
export type ProviderName = "flag" | "folder" | "secret";

/** Every provider, in the order /metrics lists them. */
export const PROVIDERS: readonly ProviderName[] = ["flag", "folder", "secret"];

/** One cluster as one source (a file, a Secret) offers it. */
export interface ClusterOffer {
  /** The cluster's name: the context name (folder, flag) or the Secret's name. */
  name: string;
  /** Set when usable. */
  access?: ClusterAccess;
  /** Why it is not usable; shown on the name's /status entry. */
  error?: string;
  /** A change here re-engages (server URL, CA, TLS settings, proxy, namespace). */
  endpointDigest: string;
  /** A change here alone swaps credentials in place. */
  credentialsDigest: string;
}

/** What the registry drives; the Hub fits. */
export interface EngageTarget {
  engage(name: string, access: ClusterAccess, registration: ClusterRegistration): Promise<void>;
  disengage(name: string): Promise<void>;
  hold(name: string, problem: RegistrationProblem | undefined): void;
  /** Shows the providers' own health (the Hub's `providers` section of /status). */
  showProviders?(read: () => Record<string, ProviderHealth>): void;
}

/** What a provider says about its own watch, asked whenever /status is built. */
export interface ProviderWatch {
  state: ProviderHealth["state"];
  watches: string[];
  lastError: string | null;
}

export interface ClusterRegistryOptions {
  /** `all` (everything registered, now and later) or the names `--clusters` selected. */
  selection: "all" | readonly string[];
  /** Names engaged or disengaged at once. Default 8. */
  concurrency?: number;
  /** Appended to "selected but not registered" errors: where a user registers a cluster. */
  howToRegister?: string;
  clock?: Clock;
  logger: Logger;
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

interface Source {
  provider: ProviderName;
  source: string;
  offers: Map<string, ClusterOffer>;
}

interface Served {
  provider: ProviderName;
  source: string;
  endpointDigest: string;
  credentialsDigest: string;
  access: SwappableAccess;
  registeredAt: string;
}

type Desired =
  | { kind: "none" }
  | { kind: "hold"; problem: RegistrationProblem }
  | { kind: "serve"; provider: ProviderName; source: string; offer: ClusterOffer & { access: ClusterAccess } };

/**
 * Resolves every provider's offers to one cluster per name and keeps the target in step.
 *
 * Guarantees:
 * - a name offered by more than one source (two files, a file and a Secret, a context defined twice) is served by
 *   none of them and shows `registering` with an error naming every source, until all but one are gone: never a
 *   silent overwrite, and the outcome does not depend on which source was read first;
 * - an offer whose server, CA, TLS settings, proxy and namespace are unchanged but whose credentials changed is
 *   swapped into the served access in place (no disengage, no relist); anything else that changes re-engages;
 * - names are synced in parallel, at most `concurrency` at once and one sync per name at a time; engaging never
 *   waits for a cluster to answer (the Hub's workers connect in the background), so a slow cluster delays nothing;
 * - a name `--clusters` selected explicitly is always shown: `registering` while no source offers it.
 */
export class ClusterRegistry {
  readonly #o: ClusterRegistryOptions;
  #target: EngageTarget | undefined;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #selected: Set<string> | "all";
  readonly #sources = new Map<string, Source>();
  /** name → keys of the sources that offer it. */
  readonly #claims = new Map<string, Set<string>>();
  readonly #served = new Map<string, Served>();
  readonly #held = new Set<string>();
  readonly #dirty = new Set<string>();
  readonly #syncing = new Map<string, Promise<void>>();
  /** Each provider's own watch, as it reports it. */
  readonly #watches = new Map<ProviderName, () => ProviderWatch>();
  /** `provider\0source` → why that source offers nothing (a file that does not parse, a Secret that cannot be read). */
  readonly #unusable = new Map<string, { provider: ProviderName; source: string; error: string }>();
  #idleWaiters: (() => void)[] = [];
  #stopped = false;

  constructor(options: ClusterRegistryOptions) {
    this.#o = options;
    this.#clock = options.clock ?? new SystemClock();
    this.#log = options.logger;
    this.#selected = options.selection === "all" ? "all" : new Set(options.selection);
    if (this.#selected !== "all") { for (const name of this.#selected) this.#dirty.add(name); }
  }

  /** Starts driving `target`: everything offered so far is synced now, later offers as they come. */
  connect(target: EngageTarget): void {
    this.#target = target;
    target.showProviders?.(() => this.providerHealth());
    this.#pump();
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
    const out: Record<string, ProviderHealth> = {};
    const entry = (p: ProviderName) => out[p];
    for (const p of PROVIDERS) {
      const w = this.#watches.get(p);
      if (w) out[p] = { ...w(), clusters: 0, errors: [] };
    }
    for (const s of this.#served.values()) if (entry(s.provider)) entry(s.provider).clusters++;
    for (const u of this.#unusable.values()) entry(u.provider)?.errors.push({ source: u.source, error: u.error });
    for (const s of this.#sources.values()) {
      const e = entry(s.provider);
      if (!e) continue;
      for (const [name, o] of s.offers) {
        if (o.error || !o.access) {
          e.errors.push({ source: s.source, cluster: name, error: o.error ?? `cluster "${name}" is not usable` });
        } else if ((this.#claims.get(name)?.size ?? 0) > 1) {
          const want = this.#desired(name);
          if (want.kind === "hold") e.errors.push({ source: s.source, cluster: name, error: want.problem.error });
        }
      }
    }
    for (const e of Object.values(out)) {
      e.errors.sort((a, b) => a.source.localeCompare(b.source) || (a.cluster ?? "").localeCompare(b.cluster ?? ""));
    }
    return out;
  }

  /**
   * Where the selected names stand now, before anything is engaged: what would be served and what not, and why.
   * main.ts turns problems at start-up into exit code 2.
   */
  check(): { serving: ClusterAccess[]; problems: { name: string; error: string; registered: boolean }[] } {
    const names = this.#selected === "all" ? [...this.#claims.keys()].sort() : [...this.#selected];
    const serving: ClusterAccess[] = [];
    const problems: { name: string; error: string; registered: boolean }[] = [];
    for (const name of names) {
      const want = this.#desired(name);
      if (want.kind === "serve") serving.push(want.offer.access);
      else if (want.kind === "hold") {
        problems.push({ name, error: want.problem.error, registered: this.#claims.has(name) });
      }
    }
    return { serving, problems };
  }

  /** Every name some source offers, sorted. */
  names(): string[] {
    return [...this.#claims.keys()].sort();
  }

  /** Replaces everything `source` of `provider` offers. */
  offer(provider: ProviderName, source: string, offers: ClusterOffer[]): void {
    const key = `${provider}\u0000${source}`;
    const before = this.#sources.get(key);
    const next = new Map<string, ClusterOffer>();
    const doubled = new Set<string>();
    for (const o of offers) {
      if (next.has(o.name)) doubled.add(o.name);
      next.set(o.name, o);
    }
    for (const name of doubled) {
      next.set(name, { ...next.get(name)!, access: undefined, error: `"${name}" is defined twice in ${source}` });
    }
    // The sources are updated before any name is marked: a sync reads them as soon as it is marked.
    if (next.size === 0) this.#sources.delete(key);
    else this.#sources.set(key, { provider, source, offers: next });
    const changed: string[] = [];
    for (const name of before?.offers.keys() ?? []) {
      if (!next.has(name) && this.#unclaim(name, key)) changed.push(name);
    }
    for (const [name, o] of next) {
      const old = before?.offers.get(name);
      this.#claim(name, key);
      if (
        !old || old.endpointDigest !== o.endpointDigest || old.credentialsDigest !== o.credentialsDigest ||
        old.error !== o.error || !old.access !== !o.access
      ) changed.push(name);
    }
    for (const name of changed) this.#mark(name);
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
    if (this.#dirty.size === 0 && this.#syncing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Adds `hub_clusters_registered{provider}` to a Prometheus registry. */
  registerMetrics(registry: client.Registry): void {
    const served = this.#served;
    new client.Gauge({
      name: "hub_clusters_registered",
      help: "Clusters engaged, by the provider that registered them (flag, folder, secret)",
      labelNames: ["provider"],
      registers: [registry],
      collect() {
        const counts = new Map<string, number>(PROVIDERS.map((p) => [p, 0]));
        for (const s of served.values()) counts.set(s.provider, (counts.get(s.provider) ?? 0) + 1);
        for (const [provider, n] of counts) this.set({ provider }, n);
      },
    });
  }

  /** Syncs until `signal` aborts, then waits for syncs in flight. The target's own stop disengages the clusters. */
  async start(signal: AbortSignal): Promise<void> {
    if (!signal.aborted) await new Promise<void>((r) => signal.addEventListener("abort", () => r(), { once: true }));
    this.#stopped = true;
    this.#dirty.clear();
    await Promise.all(this.#syncing.values());
  }

  #claim(name: string, key: string): void {
    let set = this.#claims.get(name);
    if (!set) this.#claims.set(name, set = new Set());
    set.add(key);
  }

  #unclaim(name: string, key: string): boolean {
    const set = this.#claims.get(name);
    const had = set?.delete(key) ?? false;
    if (set?.size === 0) this.#claims.delete(name);
    return had;
  }

  #mark(name: string): void {
    if (this.#stopped) return;
    this.#dirty.add(name);
    this.#pump();
  }

  #pump(): void {
    if (!this.#target) return;
    const limit = this.#o.concurrency ?? 8;
    for (const name of this.#dirty) {
      if (this.#syncing.size >= limit) break;
      if (this.#syncing.has(name)) continue;
      this.#dirty.delete(name);
      const run = this.#sync(name).catch((err) => {
        this.#log.error("cluster registration failed", { cluster: name, error: errorText(err) });
      }).finally(() => {
        this.#syncing.delete(name);
        this.#pump();
        if (this.#dirty.size === 0 && this.#syncing.size === 0) {
          const waiters = this.#idleWaiters;
          this.#idleWaiters = [];
          for (const w of waiters) w();
        }
      });
      this.#syncing.set(name, run);
    }
  }

  #desired(name: string): Desired {
    const selected = this.#selected === "all" || this.#selected.has(name);
    if (!selected) return { kind: "none" };
    const keys = [...this.#claims.get(name) ?? []].sort();
    if (keys.length === 0) {
      if (this.#selected === "all") return { kind: "none" };
      return {
        kind: "hold",
        problem: {
          error: `cluster "${name}" is selected by --clusters but no provider registers it yet${
            this.#o.howToRegister ? `; ${this.#o.howToRegister}` : ""
          }`,
        },
      };
    }
    const sources = keys.map((k) => this.#sources.get(k)!);
    if (sources.length > 1) {
      const where = sources.map((s) => `${s.provider} ${s.source}`).join(", ");
      return {
        kind: "hold",
        problem: {
          error: `name collision: cluster "${name}" is registered ${sources.length} times (${where}); ` +
            `none of them is served until all but one are renamed or removed`,
        },
      };
    }
    const s = sources[0];
    const offer = s.offers.get(name)!;
    if (!offer.access || offer.error) {
      return {
        kind: "hold",
        problem: { provider: s.provider, error: offer.error ?? `cluster "${name}" from ${s.source} is not usable` },
      };
    }
    return { kind: "serve", provider: s.provider, source: s.source, offer: { ...offer, access: offer.access } };
  }

  async #sync(name: string): Promise<void> {
    if (this.#stopped) return;
    const want = this.#desired(name);
    const cur = this.#served.get(name);
    const target = this.#target!;
    if (want.kind === "serve") {
      const { offer, provider, source } = want;
      if (cur && cur.provider === provider && cur.endpointDigest === offer.endpointDigest) {
        if (cur.credentialsDigest !== offer.credentialsDigest) {
          cur.access.swap(offer.access);
          cur.credentialsDigest = offer.credentialsDigest;
          this.#log.info("cluster credentials replaced in place", { cluster: name, provider, source });
        }
        cur.source = source;
        return;
      }
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
      await target.engage(name, access, { provider, registeredAt });
      this.#log.info(cur ? "cluster re-registered: its server changed" : "cluster registered", {
        cluster: name,
        provider,
        source,
      });
      return;
    }
    if (cur) {
      this.#served.delete(name);
      await target.disengage(name);
      this.#log.info("cluster unregistered", { cluster: name, provider: cur.provider, source: cur.source });
    }
    if (want.kind === "hold") {
      this.#held.add(name);
      target.hold(name, want.problem);
      this.#log.warn("cluster not served", { cluster: name, error: want.problem.error });
    } else if (this.#held.delete(name)) {
      target.hold(name, undefined);
    }
  }
}
