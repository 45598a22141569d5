import { clustersRun, prepareTenants } from "./_clusters_phase.ts";
const n = Number(Deno.args[0] ?? 1000);
const all = await prepareTenants(n, ["prod", "staging", "dev"], console.log);
for (const k of (Deno.args[1] ?? `${n}`).split(",").map(Number)) {
  const flags = Deno.env.get("PROF") ? ["--cpu-prof", `--cpu-prof-dir=${Deno.env.get("PROF")}`] : [];
  const r = await clustersRun(all, k, {
    log: console.log,
    idleMs: k >= 1000 ? 30_000 : 0,
    latency: k >= 1000,
    settleMs: Number(Deno.env.get("SETTLE") ?? 15000),
    denoFlags: flags,
    readyTimeoutMs: 600_000,
  });
  console.log(JSON.stringify(r));
}
