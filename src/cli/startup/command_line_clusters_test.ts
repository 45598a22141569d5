// Unit tests of which registrations the command line defines, as marked on their way to the Hub.
import assert from "node:assert/strict";
import type { ClusterRegistration, RegistrationProblem } from "../../hub/mod.ts";
import type { EngageTarget } from "../../hub/providers/mod.ts";
import type { ClusterAccess } from "../../kube/mod.ts";
import { markingCommandLine } from "./command_line_clusters.ts";

function access(name: string, source: string): ClusterAccess {
  return {
    name,
    server: "https://x.invalid",
    source,
    auth: () => Promise.resolve({ headers: {}, insecureSkipTlsVerify: false }),
  };
}

/** A target recording what it is told. */
function recorder() {
  const engaged = new Map<string, ClusterRegistration>();
  const held = new Map<string, RegistrationProblem | undefined>();
  const target: EngageTarget = {
    engage: (name, _a, r) => Promise.resolve(void engaged.set(name, r)),
    disengage: (name) => Promise.resolve(void engaged.delete(name)),
    hold: (name, p) => void held.set(name, p),
  };
  return { target, engaged, held };
}

const at = "2026-01-01T00:00:00.000Z";

Deno.test("markingCommandLine() marks flag clusters and contexts of --kubeconfig files as the command line's, every other provider's not", async () => {
  const r = recorder();
  const t = markingCommandLine(r.target, ["conf/hub.yaml"], "/work");
  await t.engage("prod", access("prod", "/work/conf/hub.yaml"), { provider: "folder", registeredAt: at });
  await t.engage("in-cluster", access("in-cluster", "/var/run/secrets"), { provider: "flag", registeredAt: at });
  await t.engage("dropped", access("dropped", "/work/clusters/dropped.yaml"), { provider: "folder", registeredAt: at });
  await t.engage("r-closed", access("r-closed", "secret ns/r-closed"), { provider: "secret", registeredAt: at });
  await t.engage("team/a", access("team/a", "/work/conf/hub.yaml"), { provider: "cluster-profile", registeredAt: at });
  assert.deepEqual(Object.fromEntries([...r.engaged].map(([n, reg]) => [n, reg.commandLine])), {
    prod: true,
    "in-cluster": true,
    dropped: false,
    "r-closed": false,
    "team/a": false,
  });
  assert.equal(r.engaged.get("prod")!.provider, "folder", "the registration is otherwise passed as it is");
});

Deno.test("markingCommandLine() keeps a --kubeconfig context that broke the command line's while it is held, and a name only providers may register not", async () => {
  const r = recorder();
  const t = markingCommandLine(r.target, ["/abs/hub.yaml"], "/elsewhere");
  await t.engage("prod", access("prod", "/abs/hub.yaml"), { provider: "folder", registeredAt: at });
  await t.disengage("prod");
  t.hold("prod", { provider: "folder", error: "context prod: no user" });
  t.hold("ghost", { error: "selected by --clusters but no provider registers it yet" });
  t.hold("static", { provider: "flag", error: "broken" });
  t.hold("gone", undefined);
  assert.equal(r.held.get("prod")?.commandLine, true);
  assert.equal(r.held.get("ghost")?.commandLine, false);
  assert.equal(r.held.get("static")?.commandLine, true);
  assert.equal(r.held.get("gone"), undefined);
  await t.engage("prod", access("prod", "secret ns/prod"), { provider: "secret", registeredAt: at });
  await t.disengage("prod");
  t.hold("prod", { provider: "secret", error: "x" });
  assert.equal(r.held.get("prod")?.commandLine, false, "taken over by an untrusted source since");
});

Deno.test("markingCommandLine() passes removed and showProviders through only when the target has them", () => {
  const r = recorder();
  const t = markingCommandLine(r.target, [], "/");
  assert.equal(t.removed, undefined);
  assert.equal(t.showProviders, undefined);
  const calls: string[] = [];
  const full = markingCommandLine(
    {
      ...r.target,
      removed: (name) => Promise.resolve(void calls.push(`removed ${name}`)),
      showProviders: () => void calls.push("showProviders"),
    },
    [],
    "/",
  );
  full.removed!("x", access("x", "y"));
  full.showProviders!(() => ({}));
  assert.deepEqual(calls, ["removed x", "showProviders"]);
});
