// Unit tests of the Hub's cluster launcher: trusted and untrusted clusters' logs and first contact, and each run's end.

import assert from "node:assert/strict";
import type { ClusterAccess, ClusterAuth, FetchLike } from "../../kube/mod.ts";
import type { Operator } from "../../runtime/mod.ts";
import { Logger, VirtualClock } from "../../util/mod.ts";
import { ClusterLauncher, type Engaged } from "./_cluster_launch.ts";
import { CANNOT_CONNECT } from "./_untrusted_errors.ts";
import { DEFAULT_LIMITS } from "../hub_limits.ts";

const REFUSED = "tcp connect error: Connection refused (os error 111) to 10.9.8.7:2379";
const refuse: FetchLike = () => Promise.reject(new TypeError(REFUSED));

const uuid: Operator = {
  name: "uuid",
  resource: { group: "demo.operator", version: "v1", kind: "Uuid", plural: "uuid" },
  verbs: [],
  events: false,
  uses: [],
  reconciler: { reconcile: () => Promise.resolve() },
};

function access(name: string): ClusterAccess {
  return {
    name,
    server: `https://${name}.invalid:6443`,
    source: "test",
    auth: (): Promise<ClusterAuth> => Promise.resolve({ headers: {}, insecureSkipTlsVerify: false }),
  };
}

/** Launches `untrusted` clusters and `trusted` ones at a refusing server, lets them fail, stops them; the log lines. */
async function launchAll(untrusted: number, trusted: string[]) {
  const lines: Record<string, unknown>[] = [];
  const logger = new Logger({ level: "debug", write: (l) => lines.push(JSON.parse(l)) });
  const clock = new VirtualClock(1_000_000);
  const launcher = new ClusterLauncher({
    hub: { logger, fetch: refuse, clock },
    limits: { ...DEFAULT_LIMITS },
    clock,
    onResponse: () => {},
    operators: () => [uuid],
    onChange: () => {},
    lookup: () => undefined,
    clusterNames: () => [],
  });
  const stop = new AbortController();
  const engaged: Engaged[] = [];
  for (let i = 0; i < untrusted; i++) engaged.push(launcher.launch(`r-${i}`, access(`r-${i}`), stop.signal, false));
  for (const name of trusted) engaged.push(launcher.launch(name, access(name), stop.signal, true));
  for (let i = 0; i < 20; i++) await clock.advance(50);
  stop.abort();
  await clock.advance(20_000);
  await Promise.all(engaged.map((e) => e.done));
  launcher.flush();
  return { lines, engaged };
}

Deno.test("ClusterLauncher summarises untrusted clusters' first-contact failures in one stream, with the generic reason", async () => {
  const { lines } = await launchAll(12, []);
  const contact = lines.filter((l) => l.msg === "cluster not reachable" && l.level !== "debug");
  assert.ok(contact.length >= 1 && contact.length <= 6, JSON.stringify(contact));
  const shown = lines.filter((l) => l.level !== "debug");
  assert.ok(!JSON.stringify(shown).includes("refused"), JSON.stringify(shown));
  assert.ok(shown.filter((l) => l.error !== undefined).every((l) => l.error === CANNOT_CONNECT));
});

Deno.test("ClusterLauncher logs a trusted cluster's first-contact failure in full with its name", async () => {
  const { lines } = await launchAll(0, ["prod"]);
  const prod = lines.filter((l) => l.cluster === "prod" && l.level !== "debug" && l.error !== undefined);
  assert.ok(prod.length > 0, JSON.stringify(lines));
  assert.ok(prod.every((l) => String(l.error).includes("Connection refused")), JSON.stringify(prod));
});

Deno.test("ClusterLauncher ends every run when the parent signal aborts, and each cluster's own abort is its own", async () => {
  const { engaged } = await launchAll(2, ["prod"]);
  assert.equal(engaged.length, 3);
  for (const e of engaged) assert.ok(e.abort.signal.aborted, e.cluster.name);
});
