// Unit tests for onRemoved: every call but `removed` goes to the target unchanged, and `removed` runs the target's own
// hook before the added step.
import assert from "node:assert/strict";
import type { ClusterAccess } from "../../kube/mod.ts";
import { onRemoved } from "./on_removed.ts";
import type { EngageTarget } from "./registry.ts";

const ACCESS = { name: "a", server: "https://127.0.0.1:1" } as unknown as ClusterAccess;

Deno.test("onRemoved passes every call to the target and runs the target's removed before the added step", async () => {
  const calls: string[] = [];
  const target: EngageTarget = {
    engage: (name) => Promise.resolve(void calls.push(`engage ${name}`)),
    disengage: (name) => Promise.resolve(void calls.push(`disengage ${name}`)),
    hold: (name) => void calls.push(`hold ${name}`),
    removed: async (name) => {
      await Promise.resolve();
      calls.push(`target removed ${name}`);
    },
    showProviders: () => void calls.push("showProviders"),
  };
  const wrapped = onRemoved(
    onRemoved(target, async (name, access) => {
      assert.equal(access, ACCESS);
      await Promise.resolve();
      calls.push(`first step ${name}`);
    }),
    (name) => Promise.resolve(void calls.push(`second step ${name}`)),
  );
  await wrapped.engage("a", ACCESS, {} as Parameters<EngageTarget["engage"]>[2]);
  await wrapped.disengage("a");
  wrapped.hold("a", undefined);
  wrapped.showProviders!(() => ({}));
  await wrapped.removed!("a", ACCESS);
  assert.deepEqual(calls, [
    "engage a",
    "disengage a",
    "hold a",
    "showProviders",
    "target removed a",
    "first step a",
    "second step a",
  ]);
});

Deno.test("onRemoved has showProviders only when the target has it, and runs the step when the target has no removed", async () => {
  const stepped: string[] = [];
  const bare: EngageTarget = { engage: () => Promise.resolve(), disengage: () => Promise.resolve(), hold: () => {} };
  const wrapped = onRemoved(bare, (name) => Promise.resolve(void stepped.push(name)));
  assert.equal("showProviders" in wrapped, false);
  await wrapped.removed!("b", ACCESS);
  assert.deepEqual(stepped, ["b"]);
});
