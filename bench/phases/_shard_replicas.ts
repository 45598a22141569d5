// The shards phase's replicas: hub subprocesses of one shard group, their /status views, and waiting until they agree.

import { HubProcess, runTaskPermissions } from "../../dev/support/hub_process.ts";
import { runTaskV8Flags, sleep } from "../lib/hub.ts";
import { log } from "../lib/run.ts";
import { round } from "../lib/stats.ts";

/** Hang guards, not speed checks. */
const SETTLE_GUARD_MS = 240_000;
const TAKEOVER_GUARD_MS = 180_000;
/**
 * How long the replicas' agreed owners must stay unchanged before a state counts as settled: longer than a renew
 * period (2 s) plus a pass, so a state caught between a peer becoming visible and the others handing over is not
 * taken for the final one.
 */
const STABLE_MS = 5_000;

/** One replica's /status, reduced to what the phase reads. */
export interface View {
  id: string;
  owners: Record<string, string | null>;
  engaged: string[];
  livePeers: number;
  violations: number;
}

/** Replica `h`'s /status reduced to a View, or undefined while it does not answer (or is not sharded). */
export async function viewOf(h: HubProcess): Promise<View | undefined> {
  try {
    // One page of up to 5,000 clusters holds every cluster of the phase (1,000 at most), and every owner.
    const s = (await h.get("/status?limit=5000")).body;
    if (!s?.shard) return undefined;
    return {
      id: s.shard.identity,
      owners: s.shard.clusters,
      engaged: Object.keys(s.clusters ?? {}),
      livePeers: s.shard.peers.filter((p: { live: boolean }) => p.live).length,
      violations: s.shard.fenceViolations,
    };
  } catch {
    return undefined;
  }
}

/** A set of replicas of one shard group on one kubeconfig. */
export class Replicas {
  readonly hubs: HubProcess[] = [];
  /** identity → the last fence-violation count read from it. */
  readonly violations = new Map<string, number>();
  readonly #file: string;
  readonly #args: string[];

  constructor(file: string, args: string[]) {
    this.#file = file;
    this.#args = args;
  }

  start(): HubProcess {
    const h = HubProcess.start({
      clusters: ["all"],
      kubeconfigs: [this.#file],
      args: this.#args,
      permissions: [...runTaskPermissions(), ...runTaskV8Flags()],
      captureLogs: true,
    });
    this.hubs.push(h);
    return h;
  }

  async views(hubs = this.hubs): Promise<(View | undefined)[]> {
    const vs = await Promise.all(hubs.map(viewOf));
    for (const v of vs) if (v) this.violations.set(v.id, v.violations);
    return vs;
  }

  /**
   * Waits until the replicas agree on one live owner per cluster among themselves, each engaged exactly what it
   * owns, and each sees all of them live, and that agreement stays unchanged for STABLE_MS; resolves with the owners.
   * Agreed states that did not last are logged (they are what a single poll would have taken for settled).
   */
  async settled(clusters: string[], guardMs = SETTLE_GUARD_MS): Promise<Record<string, string>> {
    const deadline = performance.now() + guardMs;
    let last = "";
    let agreedSince = 0;
    let agreedKey = "";
    let agreedOwners: Record<string, string> | undefined;
    let stableSince: number | undefined;
    while (performance.now() < deadline) {
      const vs = await this.views();
      const ok = vs.every((v) => v !== undefined) ? vs as View[] : undefined;
      let owners: Record<string, string> | undefined;
      if (ok) {
        const ids = new Set(ok.map((v) => v.id));
        const agreed: Record<string, string> = {};
        let all = ok.every((v) => v.livePeers === ok.length);
        for (const c of clusters) {
          const o = ok[0].owners?.[c];
          if (!o || !ids.has(o) || ok.some((v) => v.owners?.[c] !== o)) {
            all = false;
            break;
          }
          agreed[c] = o;
        }
        if (all && ok.every((v) => v.engaged.length === clusters.filter((c) => agreed[c] === v.id).length)) {
          owners = agreed;
        }
        last = `${ok.map((v) => `${v.id}: ${v.engaged.length} engaged, ${v.livePeers} peers`).join("; ")}`;
      }
      const key = owners ? JSON.stringify(owners) : "";
      if (owners && key !== agreedKey) {
        if (agreedOwners) {
          const differ = clusters.filter((c) => agreedOwners![c] !== owners![c]);
          log(
            `shards: an agreed state held ${round((performance.now() - agreedSince) / 1000, 2)} s, then another: ` +
              `${differ.length} owners differ (${
                differ.map((c) => `${c} ${agreedOwners![c]}→${owners![c]}`).join(", ")
              })`,
          );
        }
        agreedOwners = owners;
        agreedKey = key;
        agreedSince = performance.now();
      }
      if (!owners) stableSince = undefined;
      else stableSince ??= performance.now();
      if (owners && stableSince !== undefined && performance.now() - Math.max(stableSince, agreedSince) >= STABLE_MS) {
        return owners;
      }
      await sleep(100);
    }
    throw new Error(`shards: replicas did not settle within ${guardMs} ms: ${last}`);
  }

  /** Seconds from `since` until every cluster is owned by one of `hubs` in all their views. */
  async ownedBy(hubs: HubProcess[], clusters: string[], since: number): Promise<number> {
    while (performance.now() - since < TAKEOVER_GUARD_MS) {
      const vs = await this.views(hubs);
      if (vs.every((v) => v !== undefined)) {
        const ids = new Set(vs.map((v) => v!.id));
        if (clusters.every((c) => vs.every((v) => ids.has(v!.owners?.[c] ?? "")))) {
          return (performance.now() - since) / 1000;
        }
      }
      await sleep(50);
    }
    throw new Error(`shards: clusters not owned again within ${TAKEOVER_GUARD_MS} ms`);
  }

  async kill(h: HubProcess): Promise<void> {
    await this.views([h]);
    await h.kill();
    this.hubs.splice(this.hubs.indexOf(h), 1);
  }

  async stop(h: HubProcess): Promise<void> {
    await this.views([h]);
    const status = await h.stop();
    if (status.code !== 0) log(`shards: a replica exited with ${status.code}\n${h.tail()}`);
    this.hubs.splice(this.hubs.indexOf(h), 1);
  }

  async stopAll(): Promise<void> {
    await this.views();
    await Promise.all(this.hubs.map((h) => h.stop()));
    this.hubs.length = 0;
  }
}
