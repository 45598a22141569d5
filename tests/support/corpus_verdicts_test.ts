// Unit tests for judging a corpus kubeconfig from /status.
import assert from "node:assert/strict";
import { judge, observe } from "./corpus_verdicts.ts";
import type { CorpusCase, Expectation } from "./kubeconfig_mutations.ts";

const UUIDS = { uuids: { prod: 5, staging: 6, dev: 7 }, registeredAt: { prod: "2026-01-01T00:00:00.000Z" } };
const SOURCE = { source: "ns/k1" };

function corpusCase(expect: Partial<Expectation>, name = "k1"): CorpusCase {
  return {
    id: 1,
    provider: "secret",
    name,
    bytes: new Uint8Array(),
    mutations: [],
    target: "staging",
    attacker: false,
    expect: { refused: [], mustRefuse: false, failing: false, ignored: false, ...expect },
    secrets: ["corpus-password-123"],
  };
}

const flagProd = {
  prod: { provider: "folder", state: "watching", objects: 5, registeredAt: "2026-01-01T00:00:00.000Z" },
};

function status(entry: unknown, errors: unknown[] = []): unknown {
  return { clusters: { ...flagProd, ...(entry ? { k1: entry } : {}) }, providers: { secret: { errors } } };
}

Deno.test("judge() accepts a case served with exactly its target's Uuids cached, and not one that caches another count", () => {
  const c = corpusCase({ served: "staging" });
  assert.deepEqual(judge(c, SOURCE, status({ provider: "secret", state: "watching", objects: 6 }), UUIDS), {
    observed: "served",
    line: undefined,
    problem: undefined,
  });
  const wrong = judge(c, SOURCE, status({ provider: "secret", state: "watching", objects: 5 }), UUIDS);
  assert.match(wrong.problem!, /served with 5 objects cached; staging holds 6 Uuids/);
});

Deno.test("judge() fails a case that had to be refused but is served or engaged and failing", () => {
  const c = corpusCase({ refused: ["token-file"], mustRefuse: true });
  const served = judge(c, SOURCE, status({ provider: "secret", state: "watching", objects: 6 }), UUIDS);
  assert.equal(served.problem, "served, but it had to be refused");
  const failing = judge(
    c,
    SOURCE,
    status({ provider: "secret", state: "unauthorized", lastError: "401 Unauthorized" }),
    UUIDS,
  );
  assert.equal(failing.problem, "engaged, but it had to be refused unengaged");
});

Deno.test("judge() accepts a refusal that is one line naming the source and a reason, and nothing less", () => {
  const c = corpusCase({ refused: ["token-file"], mustRefuse: true });
  const err = (error: string) =>
    status({ state: "registering", lastError: error }, [{ source: "ns/k1", cluster: "k1", error }]);
  const good = 'context "k1" in secret ns/k1: user field tokenFile names a file on the hub\'s own disk';
  assert.equal(judge(c, SOURCE, err(good), UUIDS).problem, undefined);
  assert.equal(judge(c, SOURCE, err(good), UUIDS).observed, "refused");
  assert.match(judge(c, SOURCE, err("secret ns/k1: no"), UUIDS).problem!, /gives none of the reasons token-file/);
  assert.match(judge(c, SOURCE, err("tokenFile refused"), UUIDS).problem!, /names neither ns\/k1 nor "k1"/);
  assert.match(judge(c, SOURCE, err(`${good}\nsecond line`), UUIDS).problem!, /not one line/);
  assert.match(judge(c, SOURCE, err(`${good} corpus-password-123`), UUIDS).problem!, /quotes a credential/);
});

Deno.test("judge() keeps another source's errors and another name's entry out of a case's verdict", () => {
  const c = corpusCase({ served: "staging" });
  const s = status({ provider: "secret", state: "watching", objects: 6 }, [
    { source: "ns/k2", cluster: "k2", error: "refused" },
    { source: "ns/k1", cluster: "k1-other", error: "refused" },
  ]);
  assert.equal(judge(c, SOURCE, s, UUIDS).observed, "served");
});

Deno.test("judge() requires a reserved name to leave the command line's cluster as it was and the case to be shown as refused", () => {
  const c = corpusCase({ reserved: "prod", refused: ["reserved"], mustRefuse: true }, "prod");
  const line = "name prod is reserved: the command line defines it; secret ns/prod is not served";
  const errors = { secret: { errors: [{ source: "ns/prod", cluster: "prod", error: line }] } };
  assert.equal(judge(c, { source: "ns/prod" }, { clusters: flagProd, providers: errors }, UUIDS).problem, undefined);
  for (
    const prod of [
      { ...flagProd.prod, state: "registering", lastError: "name collision" },
      { ...flagProd.prod, registeredAt: "2026-01-01T00:00:09.000Z" },
      { ...flagProd.prod, objects: 6 },
    ]
  ) {
    const taken = { clusters: { prod }, providers: errors };
    assert.match(judge(c, { source: "ns/prod" }, taken, UUIDS).problem!, /"prod" is no longer served as it was/);
  }
  const inCluster = corpusCase({ reserved: "in-cluster", refused: ["reserved"], mustRefuse: true }, "in-cluster");
  const tookIt = { clusters: { ...flagProd, "in-cluster": { provider: "secret", state: "watching", objects: 0 } } };
  assert.match(judge(inCluster, { source: "ns/in-cluster" }, tookIt, UUIDS).problem!, /took the reserved name/);
});

Deno.test("judge() accepts a reserved-name case refused as a whole for its YAML alias, and still requires the command line's cluster as it was", () => {
  const c = corpusCase({ reserved: "prod", refused: ["reserved", "alias"], mustRefuse: true }, "prod");
  const line = "invalid kubeconfig secret ns/prod: uses a YAML alias (line 22), which an untrusted kubeconfig may not";
  const errors = { secret: { errors: [{ source: "ns/prod", error: line }] } };
  assert.equal(judge(c, { source: "ns/prod" }, { clusters: flagProd, providers: errors }, UUIDS).problem, undefined);
  const plain = corpusCase({ reserved: "prod", refused: ["reserved"], mustRefuse: true }, "prod");
  assert.match(
    judge(plain, { source: "ns/prod" }, { clusters: flagProd, providers: errors }, UUIDS).problem!,
    /gives none of the reasons reserved/,
  );
});

Deno.test("observe() tells pending, failing and ignored apart, and judge() accepts ignored only where allowed", () => {
  assert.equal(
    observe(corpusCase({}), SOURCE, status({ provider: "secret", state: "connecting", lastError: null })).observed,
    "pending",
  );
  assert.equal(
    observe(corpusCase({}), SOURCE, status({ provider: "secret", state: "unreachable", lastError: "ECONNREFUSED" }))
      .observed,
    "failing",
  );
  assert.equal(observe(corpusCase({}), SOURCE, status(undefined)).observed, "ignored");
  assert.equal(
    judge(corpusCase({ ignored: true, mustRefuse: true }), SOURCE, status(undefined), UUIDS).problem,
    undefined,
  );
  assert.match(
    judge(corpusCase({ mustRefuse: true }), SOURCE, status(undefined), UUIDS).problem!,
    /neither served nor refused/,
  );
});
