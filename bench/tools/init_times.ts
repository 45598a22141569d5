// A new user's first steps, timed: from an empty folder outside the checkout, `init`, `deno task test` (two kit
// clusters), `deno task crd | kubectl apply -f -` into the local cluster prod, and `deno task run` until a new object
// is served (status.phase Ready). Prints one `figure:` line per step; cleans up its CRD, namespace and folder.
//
//   deno run -A bench/tools/init_times.ts [--runs 3]
//
// The kit's binaries: $OPERATOR_HUB_KUBE_BIN when set, else the checkout's prebuilt .cache/kube-bin (a first run that
// builds them into the user cache is bench/tools/test_kit_times.ts's figure). The project links to this checkout.

import { join } from "node:path";
import { parseArgs } from "node:util";
import { freePort } from "../../src/testing/free_port.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const KUBECONFIG = join(ROOT, "clusters/local.yaml");
const { values } = parseArgs({ args: Deno.args, options: { runs: { type: "string", default: "1" } } });
const env = { OPERATOR_HUB_KUBE_BIN: Deno.env.get("OPERATOR_HUB_KUBE_BIN") ?? join(ROOT, ".cache/kube-bin") };

/** Runs a command to completion; its time in seconds (exits the tool when it fails). */
async function timed(cmd: string, args: string[], cwd: string, stdin?: string): Promise<[number, string]> {
  const started = performance.now();
  const child = new Deno.Command(cmd, {
    args,
    cwd,
    env,
    stdin: stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  })
    .spawn();
  if (stdin) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(stdin));
    await w.close();
  }
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout);
  if (out.code !== 0) {
    console.error(
      `${cmd} ${args.join(" ")} failed (${out.code}): ${new TextDecoder().decode(out.stderr).slice(-2000)}`,
    );
    Deno.exit(1);
  }
  return [(performance.now() - started) / 1000, text];
}

const kubectl = (args: string[], stdin?: string) =>
  timed("kubectl", [`--kubeconfig=${KUBECONFIG}`, "--context=prod", ...args], ROOT, stdin);

const steps: Record<string, number[]> = {
  init: [],
  "deno task test": [],
  "crd | kubectl apply": [],
  "run → Ready": [],
};
for (let run = 0; run < Number(values.runs); run++) {
  const tmp = await Deno.makeTempDir({ prefix: "init-times-" });
  const id = crypto.randomUUID().slice(0, 8);
  const group = `times-${id}.test.operator-hub.dev`;
  const ns = `init-times-${id}`;
  const project = join(tmp, "probe-operator");
  let hub: Deno.ChildProcess | undefined;
  try {
    steps.init.push(
      (await timed(Deno.execPath(), [
        "run",
        "-A",
        join(ROOT, "cli.ts"),
        "init",
        project,
        "--group",
        group,
        "--kind",
        "Probe",
      ], tmp))[0],
    );
    steps["deno task test"].push((await timed(Deno.execPath(), ["task", "test"], project))[0]);
    const [crdSeconds, crd] = await timed(Deno.execPath(), ["task", "crd"], project);
    const [applySeconds] = await kubectl(["apply", "-f", "-"], crd);
    const [waitSeconds] = await kubectl(["wait", "--for=condition=established", `crd/probes.${group}`]);
    steps["crd | kubectl apply"].push(crdSeconds + applySeconds + waitSeconds);
    await kubectl(["create", "namespace", ns]);
    const started = performance.now();
    hub = new Deno.Command(Deno.execPath(), {
      args: [
        "task",
        "run",
        "--kubeconfig",
        KUBECONFIG,
        "--clusters",
        "prod",
        "--namespace",
        ns,
        "--liveness",
        `http://127.0.0.1:${freePort()}/healthz`,
      ],
      cwd: project,
      stdout: "null",
      stderr: "null",
    }).spawn();
    await kubectl(
      ["create", "-n", ns, "-f", "-"],
      JSON.stringify({
        apiVersion: `${group}/v1`,
        kind: "Probe",
        metadata: { name: "demo" },
        spec: { message: "hello" },
      }),
    );
    while (
      (await kubectl(["get", "-n", ns, `probes.${group}/demo`, "-o", "jsonpath={.status.phase}"]))[1] !== "Ready"
    ) {
      if (performance.now() - started > 60_000) throw new Error("the Probe was not Ready within 60 s");
      await new Promise((r) => setTimeout(r, 100));
    }
    steps["run → Ready"].push((performance.now() - started) / 1000);
  } finally {
    hub?.kill("SIGTERM");
    await hub?.status;
    await kubectl(["delete", "namespace", ns, "--ignore-not-found", "--wait=false"]).catch(() => {});
    await kubectl(["delete", "crd", `probes.${group}`, "--ignore-not-found", "--wait=false"]).catch(() => {});
    await Deno.remove(tmp, { recursive: true });
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [step, times] of Object.entries(steps)) {
  console.log(`figure: ${step}: median ${median(times).toFixed(1)} s (${times.map((t) => t.toFixed(1)).join(", ")})`);
}
