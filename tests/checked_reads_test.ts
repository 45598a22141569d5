// Declared reads end to end on a kit cluster of its own (real kube-apiserver): the Greeting example, which declares
// every field it reads, is served under the test kit's read check; a careless copy that reads spec.name without
// declaring it fails with an UndeclaredFieldError naming the field (and writes nothing), while the same copy run
// without the check silently greets the object's name instead; a Kopf-style handler that reads an undeclared status
// field fails the same way. It uses no shared local cluster (tests/run_tests.ts runs it beside the serial group).

import assert from "node:assert/strict";
import { defineHandlers, defineOperator, ignoreNotFound } from "../mod.ts";
import { Logger } from "../hub.ts";
import type { ObjectOf } from "../resources.ts";
import { eventually, testEnv } from "../testing.ts";
import { ensureBinaries } from "../dev/build/build.ts";
import { greetingOperator } from "../examples/greeting_operator.ts";
import { Greeting } from "../examples/greeting_resource.ts";

const binaries = Deno.env.get("OPERATOR_HUB_KUBE_BIN") || (await ensureBinaries()).dir;

/** The Greeting operator with `status.message` declared but `spec.name` read anyway. */
const careless = defineOperator({
  name: "careless-greeting",
  resource: Greeting,
  reads: ["status.message"],
  verbs: ["patchStatus"],
  async reconcile(request, { client }) {
    const g: ObjectOf<typeof Greeting> | undefined = client.cached(request);
    if (!g || g.status?.message) return;
    await client.patchStatus(g, { message: `Hello, ${g.spec?.name || g.metadata.name}!` }).catch(ignoreNotFound);
  },
});

/** Kopf-style: its reconcile handler reads status.message, but it declares only status.observedGeneration. */
const carelessHandlers = defineHandlers({
  name: "careless-handlers",
  resource: Greeting,
  reads: ["status.observedGeneration"],
  reconcile: ({ status, name }) => status.message ? undefined : { message: `Hello, ${name}!` },
});

Deno.test("declared reads: the Greeting example is served under the read check, and an undeclared read of spec.name fails there with an error naming it, as does a Kopf-style handler's of status.message, while unchecked it silently reads undefined", async () => {
  await using env = await testEnv({ clusters: ["east"], crds: [Greeting], binaries });
  const [declared, checked, unchecked, handlers] = await Promise.all(
    ["declared", "checked", "unchecked", "handlers"].map((n) => env.namespace(n)),
  );
  const logs: string[] = [];
  const logger = new Logger({ level: "warn", write: (line) => logs.push(line) });
  await env.run(greetingOperator, { namespaces: [declared] });
  await env.run(careless, { namespaces: [checked], logger });
  await env.run(careless, { namespaces: [unchecked], checkReads: false });
  await env.run(carelessHandlers, { namespaces: [handlers], logger });
  const greetings = env.client("east", Greeting);
  for (const namespace of [declared, checked, unchecked, handlers]) {
    await greetings.create({ metadata: { name: "g", namespace }, spec: { name: "Ada" } });
  }
  const message = (namespace: string) =>
    eventually(async () => (await greetings.get({ namespace, name: "g" })).status?.message, {
      what: `status.message in ${namespace}`,
      timeoutMs: 30_000,
    });

  assert.equal(await message(declared), "Hello, Ada!", "every field the example reads is declared");
  assert.equal(await message(unchecked), "Hello, g!", "unchecked, the undeclared spec.name is a silent undefined");
  const failed = await eventually(() => logs.find((l) => l.includes("its reads does not declare")), {
    what: "the careless reconcile's error",
    timeoutMs: 30_000,
  });
  assert.match(failed, /reconcile failed for good/, "not retried: no retry fixes the code");
  assert.match(failed, /operator careless-greeting read Greeting field spec, which its reads does not declare/);
  assert.match(failed, /reads: status\.message/);
  assert.match(failed, /Add \\"spec\\" to reads/);
  assert.equal((await greetings.get({ namespace: checked, name: "g" })).status?.message, undefined, "nothing written");
  // A Kopf-style handler under the same check: reading status.message, which it did not declare, fails there too.
  const handlerFailed = await eventually(
    () => logs.find((l) => l.includes("operator careless-handlers read Greeting field status.message")),
    { what: "the careless handler's error", timeoutMs: 30_000 },
  );
  assert.match(
    handlerFailed,
    /reads: spec, status\.handlers, metadata\.labels, metadata\.annotations, metadata\.finalizers, status\.observedGeneration/,
  );
  assert.equal((await greetings.get({ namespace: handlers, name: "g" })).status?.message, undefined, "nothing written");
});
