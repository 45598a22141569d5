// `operator-hub init` end to end, as a new user runs it: the project it writes checks, `deno task crd | kubectl apply`
// installs its CRD in prod, and `deno task run`, as the ServiceAccount of its deploy/rbac.yaml, serves the new kind there
// (a ConfigMap and status.phase per object).
// Each step's time is printed as a `figure:` line; nothing asserts on time.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  apiserverCa,
  apiserverUrl,
  freePort,
  kubectl,
  kubectlOk,
  requireClusters,
  testNamespace,
} from "../dev/support/mod.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const decoder = new TextDecoder();

/** Runs `deno ARGS` in `cwd`; answers its exit code and output, and how long it took. */
async function deno(
  args: string[],
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const started = performance.now();
  const out = await new Deno.Command(Deno.execPath(), { args, cwd, stdout: "piped", stderr: "piped" }).output();
  const ms = Math.round(performance.now() - started);
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr), ms };
}

/** Polls `check` every 250 ms until it answers a value, or fails after `timeoutMs` with what it saw last. */
async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
      last = "nothing yet";
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} did not happen within ${timeoutMs} ms; last seen: ${String(last).slice(0, 300)}`);
}

/** The code of docs/getting-started.md's first section: its deno.json and the file that defines the resource. */
function gettingStarted(
  markdown: string,
): { denoJson: { imports: Record<string, string> }; greeting: string; test: string } {
  const section = markdown.split("\n## ")[1] ?? "";
  const blocks = [...section.matchAll(/```(json|ts)\n([\s\S]*?)```/g)].map(([, lang, code]) => ({ lang, code }));
  const json = blocks.find((b) => b.lang === "json");
  const greeting = blocks.find((b) => b.lang === "ts" && b.code.includes("defineResource("));
  const test = blocks.find((b) => b.lang === "ts" && b.code.includes("testEnv("));
  assert.ok(json && greeting && test, "docs/getting-started.md's first section: a deno.json, the resource, a test");
  return { denoJson: JSON.parse(json.code), greeting: greeting.code, test: test.code };
}

Deno.test("init writes a project whose files check, whose CRD applies and whose `deno task run` serves the new kind", {
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  requireClusters();
  const tmp = await Deno.makeTempDir({ prefix: "operator-hub-init-" });
  const group = `init-${crypto.randomUUID().slice(0, 8)}.test.operator-hub.dev`;
  const crd = `probes.${group}`;
  // The folder's name is the project's: its Namespace, ServiceAccount and ClusterRole (deploy/rbac.yaml) are this run's.
  const name = `probe-operator-${crypto.randomUUID().slice(0, 8)}`;
  const project = join(tmp, name);
  let hub: Deno.ChildProcess | undefined;
  await using ns = await testNamespace("init", { contexts: ["prod"] });
  try {
    const init = await deno([
      "run",
      "-A",
      join(ROOT, "src/cli/main.ts"),
      "init",
      project,
      "--group",
      group,
      "--kind",
      "Probe",
    ], tmp);
    assert.equal(init.code, 0, init.stderr);
    console.log(`figure: init took ${init.ms} ms`);

    // docs/getting-started.md starts from an empty folder with the same deno.json imports: its greeting.ts is checked
    // here too, in the same program (no second check of the hub's graph).
    const guide = gettingStarted(await Deno.readTextFile(join(ROOT, "docs/getting-started.md")));
    const written = JSON.parse(await Deno.readTextFile(join(project, "deno.json")));
    assert.deepEqual(guide.denoJson.imports, written.imports, "the guide's deno.json imports are init's");
    await Deno.writeTextFile(join(project, "greeting.ts"), guide.greeting);
    await Deno.writeTextFile(join(project, "greeting_test.ts"), guide.test);
    const files = ["main.ts", "probe_resource.ts", "probe_operator.ts", "probe_operator_test.ts", "greeting.ts"];
    files.push("greeting_test.ts");
    // The check (CPU-bound: a fresh project checks the hub's graph too) runs while the CRD is applied and served.
    const checked = deno(["check", ...files], project);

    const printed = await deno(["task", "crd"], project);
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, new RegExp(`name: ${crd.replaceAll(".", "\\.")}\\n`));
    const started = performance.now();
    const applied = await kubectl("prod", ["apply", "-f", "-"], { stdin: printed.stdout });
    assert.equal(applied.code, 0, applied.stderr);
    const established = await kubectl("prod", ["wait", "--for=condition=established", `crd/${crd}`, "--timeout=30s"]);
    assert.equal(established.code, 0, established.stderr);
    console.log(
      `figure: deno task crd took ${printed.ms} ms, kubectl apply until established ${
        Math.round(performance.now() - started)
      } ms`,
    );

    // The hub runs as the generated deploy/rbac.yaml's ServiceAccount: those rights, and no others, must be enough.
    await kubectlOk("prod", ["apply", "-f", join(project, "deploy/rbac.yaml")]);
    const token = (await kubectlOk("prod", ["create", "token", name, "-n", name, "--duration=10m"])).trim();
    const kubeconfig = join(tmp, "prod.kubeconfig");
    await Deno.writeTextFile(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{
          name: "prod",
          cluster: { server: apiserverUrl("prod"), "certificate-authority-data": btoa(apiserverCa("prod")) },
        }],
        users: [{ name: "prod", user: { token } }],
        contexts: [{ name: "prod", context: { cluster: "prod", user: "prod" } }],
      }),
      { mode: 0o600 },
    );

    const runStarted = performance.now();
    hub = new Deno.Command(Deno.execPath(), {
      args: [
        "task",
        "run",
        "--kubeconfig",
        kubeconfig,
        "--clusters",
        "prod",
        "--namespace",
        ns.name,
        "--liveness",
        `http://127.0.0.1:${freePort()}/healthz`,
      ],
      cwd: project,
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const log: string[] = [];
    const drained = hub.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
      new WritableStream({ write: (chunk) => void (log.length < 200 && log.push(chunk)) }),
    ).catch(() => {});
    const object = { apiVersion: `${group}/v1`, kind: "Probe", metadata: { name: "demo", namespace: ns.name } };
    const created = await kubectl("prod", ["create", "-f", "-"], {
      stdin: JSON.stringify({ ...object, spec: { message: "hello" } }),
    });
    assert.equal(created.code, 0, created.stderr);
    const status = await waitFor("status.phase Ready", async () => {
      const got = await kubectl("prod", ["get", "-n", ns.name, `${crd}/demo`, "-o", "jsonpath={.status.phase}"]);
      return got.stdout === "Ready" ? got.stdout : undefined;
    }).catch((err) => Promise.reject(new Error(`${err.message}; hub log: ${log.join("").slice(-1500)}`)));
    assert.equal(status, "Ready");
    const data = await kubectl("prod", ["get", "-n", ns.name, "configmap/demo", "-o", "jsonpath={.data.message}"]);
    assert.equal(data.stdout, "hello", "the operator's ConfigMap holds spec.message");
    const owner = await kubectl("prod", [
      "get",
      "-n",
      ns.name,
      "configmap/demo",
      "-o",
      "jsonpath={.metadata.ownerReferences[0].kind}",
    ]);
    assert.equal(owner.stdout, "Probe", "adopted by its Probe");
    console.log(
      `figure: deno task run: the Probe served (status and ConfigMap) ${
        Math.round(performance.now() - runStarted)
      } ms after start`,
    );

    hub.kill("SIGTERM");
    const exit = await hub.status;
    await drained;
    hub = undefined;
    assert.equal(exit.code, 0, `the hub stops cleanly on SIGTERM; log: ${log.join("").slice(-1500)}`);
    const check = await checked;
    assert.equal(check.code, 0, check.stderr);
    console.log(`figure: deno check of ${files.join(", ")} took ${check.ms} ms (beside the steps above)`);
  } finally {
    if (hub) {
      hub.kill("SIGKILL");
      await hub.status;
    }
    await kubectl("prod", ["delete", "crd", crd, "--ignore-not-found", "--wait=false"]);
    await kubectl("prod", ["delete", `clusterrole/${name}`, `clusterrolebinding/${name}`, "--ignore-not-found"]);
    await kubectl("prod", ["delete", "namespace", name, "--ignore-not-found", "--wait=false"]);
    await Deno.remove(tmp, { recursive: true });
  }
});
