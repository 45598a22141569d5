// `deno task test`: starts the local clusters, runs the whole suite against them, and always stops them.
//
// Usage: deno task test [deno test args, e.g. --filter "fairness"] [-- files...]
// Set KEEP_CLUSTERS=1 to leave the clusters running afterwards (faster reruns).

const root = new URL("..", import.meta.url).pathname;

async function run(cmd: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  const child = new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    cwd: root,
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  let out = "";
  const decoder = new TextDecoder();
  for await (const chunk of child.stdout) {
    const text = decoder.decode(chunk, { stream: true });
    out += text;
    await Deno.stdout.write(chunk);
  }
  const { code } = await child.status;
  return { code, out };
}

const deno = Deno.execPath();
let stopping = false;
const down = async () => {
  if (Deno.env.get("KEEP_CLUSTERS") === "1") return;
  await run([deno, "run", "--allow-all", "tests/kube/clusters.ts", "down"]);
};
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(sig, async () => {
    if (stopping) return;
    stopping = true;
    await down();
    Deno.exit(130);
  });
}

let exit = 1;
try {
  const up = await run([deno, "run", "--allow-all", "tests/kube/clusters.ts", "up"]);
  if (up.code !== 0) {
    console.error("deno task test: the local clusters did not start; see the output above");
    console.log("0 passed, 1 failed");
  } else {
    const args = Deno.args.length ? Deno.args : ["src/", "tests/"];
    const result = await run([deno, "test", "--allow-all", "--no-check=remote", ...args]);
    const m = result.out.match(/(\d+) passed[^|\n]*\| (\d+) failed/);
    const passed = m ? Number(m[1]) : 0;
    const failed = m ? Number(m[2]) : 1;
    console.log(`\n${passed} passed, ${failed} failed`);
    exit = result.code === 0 && failed === 0 && passed > 0 ? 0 : 1;
  }
} finally {
  stopping = true;
  await down();
}
Deno.exit(exit);
