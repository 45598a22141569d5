// Unit tests for LeaderElector on virtual time against an in-memory Lease API with resourceVersion semantics.

import assert from "node:assert/strict";
import type { ApiClient } from "../../runtime/mod.ts";
import { Logger, VirtualClock } from "../../util/mod.ts";
import { LeaderElector, type LeaderElectorOptions, type LeaseSpec, microTime } from "./leader_election.ts";

const PATH = "/apis/coordination.k8s.io/v1/namespaces/ns/leases/hub";
const quiet = new Logger({ level: "error", write: () => {} });

class ApiError extends Error {
  override name = "ApiError";
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** One Lease in memory: GET, POST (create) and PUT (update, checked against resourceVersion). */
class FakeLeases {
  lease: { metadata: { name: string; namespace: string; resourceVersion: string }; spec: LeaseSpec } | undefined;
  #rv = 0;
  writes: { by: string; spec: LeaseSpec }[] = [];

  /** A client for one candidate; `down()` makes its requests fail, `hang()` makes them never answer. */
  client(): ApiClient & { down(on: boolean): void; hang(on: boolean): void; requests: number } {
    let mode: "up" | "down" | "hang" = "up";
    const handle = (method: string, path: string, body: unknown) => this.#handle(method, path, body);
    return {
      requests: 0,
      down(on: boolean) {
        mode = on ? "down" : "up";
      },
      hang(on: boolean) {
        mode = on ? "hang" : "up";
      },
      request<T>(method: string, path: string, options: { body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
        this.requests++;
        if (mode === "down") return Promise.reject(new TypeError("connection refused"));
        if (mode === "hang") {
          return new Promise((_, reject) =>
            options.signal?.addEventListener("abort", () => reject(options.signal!.reason), { once: true })
          );
        }
        return Promise.resolve(handle(method, path, options.body) as T);
      },
    };
  }

  #handle(method: string, path: string, body: unknown): unknown {
    const b = body as { metadata: { resourceVersion?: string }; spec: LeaseSpec } | undefined;
    if (method === "GET") {
      assert.equal(path, PATH);
      if (!this.lease) throw new ApiError(404, "not found");
      return structuredClone(this.lease);
    }
    if (method === "POST") {
      assert.equal(path, "/apis/coordination.k8s.io/v1/namespaces/ns/leases");
      if (this.lease) throw new ApiError(409, "already exists");
      this.lease = { metadata: { name: "hub", namespace: "ns", resourceVersion: String(++this.#rv) }, spec: b!.spec };
      this.writes.push({ by: b!.spec.holderIdentity ?? "", spec: b!.spec });
      return structuredClone(this.lease);
    }
    if (method === "PUT") {
      assert.equal(path, PATH);
      if (!this.lease) throw new ApiError(404, "not found");
      if (b!.metadata.resourceVersion !== this.lease.metadata.resourceVersion) throw new ApiError(409, "conflict");
      this.lease = { metadata: { ...this.lease.metadata, resourceVersion: String(++this.#rv) }, spec: b!.spec };
      this.writes.push({ by: b!.spec.holderIdentity ?? "", spec: b!.spec });
      return structuredClone(this.lease);
    }
    throw new Error(`unexpected ${method} ${path}`);
  }
}

interface Candidate {
  elector: LeaderElector;
  abort: AbortController;
  done: Promise<void>;
  api: ReturnType<FakeLeases["client"]>;
  /** [start, end) of each leadership period, in virtual ms. */
  terms: [number, number | undefined][];
}

function candidate(
  leases: FakeLeases,
  clock: VirtualClock,
  identity: string,
  extra: Partial<LeaderElectorOptions> = {},
): Candidate {
  const api = leases.client();
  const terms: [number, number | undefined][] = [];
  const elector = new LeaderElector({
    api,
    namespace: "ns",
    name: "hub",
    identity,
    clock,
    random: () => 0.5,
    logger: quiet,
    onStartedLeading: () => terms.push([clock.now(), undefined]),
    onStoppedLeading: () => terms[terms.length - 1][1] = clock.now(),
    ...extra,
  });
  const abort = new AbortController();
  return { elector, abort, done: elector.start(abort.signal), api, terms };
}

/** Advances in 50 ms steps, so every promise chain gets to schedule its next timer on time. */
async function run(clock: VirtualClock, ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 50) await clock.advance(Math.min(50, ms - t));
}

/** Asserts that no two leadership terms overlap. */
function assertNoOverlap(...cs: Candidate[]): void {
  const terms = cs.flatMap((c) => c.terms.map(([s, e]) => ({ who: c.elector.identity, s, e: e ?? Infinity })));
  for (const a of terms) {
    for (const b of terms) {
      if (a === b) continue;
      assert.ok(a.e <= b.s || b.e <= a.s, `terms overlap: ${JSON.stringify(a)} and ${JSON.stringify(b)}`);
    }
  }
}

Deno.test("LeaderElector creates the Lease and leads when nobody holds it", async () => {
  const clock = new VirtualClock(1_000_000);
  const leases = new FakeLeases();
  const a = candidate(leases, clock, "a");
  await run(clock, 100);
  assert.equal(a.elector.isLeader, true);
  assert.equal(leases.lease?.spec.holderIdentity, "a");
  assert.equal(leases.lease?.spec.leaseDurationSeconds, 15);
  assert.equal(leases.lease?.spec.leaseTransitions, 0);
  assert.deepEqual(a.elector.snapshot(), {
    lease: "ns/hub",
    identity: "a",
    leader: true,
    holder: "a",
    transitions: 0,
    lastError: null,
  });
  a.abort.abort();
  await run(clock, 100);
  await a.done;
});

Deno.test("LeaderElector renews every retry period and a second candidate stays standby meanwhile", async () => {
  const clock = new VirtualClock(0);
  const leases = new FakeLeases();
  const a = candidate(leases, clock, "a");
  await run(clock, 100);
  const b = candidate(leases, clock, "b");
  await run(clock, 60_000);
  assert.equal(a.elector.isLeader, true);
  assert.equal(b.elector.isLeader, false);
  assert.equal(b.elector.snapshot().holder, "a");
  assert.deepEqual(b.terms, []);
  const renewals = leases.writes.filter((w) => w.by === "a").length;
  assert.ok(renewals >= 28 && renewals <= 31, `about one renewal per 2 s, saw ${renewals} in 60 s`);
  assert.equal(leases.lease?.spec.leaseTransitions, 0);
  for (const c of [a, b]) c.abort.abort();
  await run(clock, 100);
  await Promise.all([a.done, b.done]);
});

Deno.test("LeaderElector: when the leader is cut off it stops at the renew deadline and a standby takes over after the lease duration", async () => {
  const clock = new VirtualClock(0);
  const leases = new FakeLeases();
  const a = candidate(leases, clock, "a");
  await run(clock, 100);
  const b = candidate(leases, clock, "b");
  await run(clock, 5_000);
  const lastRenewByA = clock.now() - (clock.now() % 2_000); // renewals happen on the 2 s grid
  a.api.down(true);
  await run(clock, 30_000);
  assert.equal(a.elector.isLeader, false);
  assert.equal(a.terms.length, 1);
  const aStopped = a.terms[0][1]!;
  assert.ok(
    aStopped - lastRenewByA <= 10_000 + 2_100,
    `a stopped ${aStopped - lastRenewByA} ms after its last renewal`,
  );
  assert.equal(b.elector.isLeader, true);
  const bStarted = b.terms[0][0];
  assert.ok(bStarted - lastRenewByA >= 15_000, `b took over ${bStarted - lastRenewByA} ms after a's last renewal`);
  // b notices a's last renewal up to one jittered retry period (2 s × 1.6 here) late.
  assert.ok(bStarted - lastRenewByA <= 15_000 + 3_300, `b took over ${bStarted - lastRenewByA} ms after`);
  assertNoOverlap(a, b);
  assert.equal(leases.lease?.spec.holderIdentity, "b");
  assert.equal(leases.lease?.spec.leaseTransitions, 1);
  // a comes back: it sees b holding the Lease and stays standby.
  a.api.down(false);
  await run(clock, 20_000);
  assert.equal(a.elector.isLeader, false);
  assert.equal(b.elector.isLeader, true);
  assertNoOverlap(a, b);
  for (const c of [a, b]) c.abort.abort();
  await run(clock, 100);
  await Promise.all([a.done, b.done]);
});

Deno.test("LeaderElector abandons a hung renewal at the renew deadline instead of leading on", async () => {
  const clock = new VirtualClock(0);
  const leases = new FakeLeases();
  const a = candidate(leases, clock, "a");
  await run(clock, 100);
  a.api.hang(true);
  await run(clock, 13_000);
  assert.equal(a.elector.isLeader, false);
  assert.ok(a.terms[0][1]! <= 12_100, `stopped at ${a.terms[0][1]}`);
  a.abort.abort();
  await run(clock, 5_000);
  await a.done;
});

Deno.test("LeaderElector releases the Lease on abort, so a standby takes over within about one retry period", async () => {
  const clock = new VirtualClock(0);
  const leases = new FakeLeases();
  const a = candidate(leases, clock, "a");
  await run(clock, 100);
  const b = candidate(leases, clock, "b");
  await run(clock, 3_000);
  a.abort.abort();
  const releasedAt = clock.now();
  await run(clock, 200);
  await a.done;
  assert.ok(leases.writes.some((w) => w.by === "" && w.spec.leaseDurationSeconds === 1), "a released the Lease");
  assert.notEqual(a.terms[0][1], undefined);
  await run(clock, 5_000);
  assert.equal(b.elector.isLeader, true);
  assert.ok(b.terms[0][0] - releasedAt <= 4_500, `took over ${b.terms[0][0] - releasedAt} ms after the release`);
  assertNoOverlap(a, b);
  b.abort.abort();
  await run(clock, 100);
  await b.done;
});

Deno.test("LeaderElector: of candidates starting together exactly one leads, and conflicts are not errors", async () => {
  const clock = new VirtualClock(0);
  const leases = new FakeLeases();
  const cs = ["a", "b", "c"].map((id) => candidate(leases, clock, id));
  await run(clock, 30_000);
  assert.equal(cs.filter((c) => c.elector.isLeader).length, 1);
  assertNoOverlap(...cs);
  for (const c of cs) assert.equal(c.elector.snapshot().lastError, null);
  for (const c of cs) c.abort.abort();
  await run(clock, 100);
  await Promise.all(cs.map((c) => c.done));
});

Deno.test("LeaderElector keeps trying while the API is down and leads once it answers", async () => {
  const clock = new VirtualClock(0);
  const leases = new FakeLeases();
  const a = candidate(leases, clock, "a");
  a.api.down(true);
  await run(clock, 10_000);
  assert.equal(a.elector.isLeader, false);
  assert.match(a.elector.snapshot().lastError ?? "", /connection refused/);
  a.api.down(false);
  await run(clock, 5_000);
  assert.equal(a.elector.isLeader, true);
  assert.equal(a.elector.snapshot().lastError, null);
  a.abort.abort();
  await run(clock, 100);
  await a.done;
});

Deno.test("microTime() writes six fractional digits, as the API server's MicroTime requires", () => {
  assert.equal(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 67)), "2026-01-02T03:04:05.067000Z");
});
