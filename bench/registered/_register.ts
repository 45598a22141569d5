// registered_clusters --phases register: 10 clusters each through a file and a Secret, registration → watching,
// removal → gone, and what each one leaves behind (sockets, metric series, timers).

import { kubeconfig, type RegisteredContext, stats, until } from "./_context.ts";
import { socketsTo } from "../lib/self_probe.ts";

/** The register phase; adds its keys to `ctx.results`. */
export async function registerPhase(ctx: RegisteredContext): Promise<void> {
  const { admin, clusterDir, liveTimers, ns, registered, results, say, secretManifest, series, staging } = ctx;
  const { stagingPort, state, writeAtomic } = ctx;
  // Baseline: nothing registered but prod.
  const timersBefore = liveTimers.size;
  const seriesBefore = (await series()).length;
  for (const provider of ["folder", "secret"] as const) {
    const watching: number[] = [];
    const gone: number[] = [];
    const socketsLeft: number[] = [];
    const seriesLeft: number[] = [];
    const timersLeft: number[] = [];
    for (let i = 0; i < 10; i++) {
      const name = `reg-${provider}-${i}`;
      const text = kubeconfig("staging", name, staging.token);
      const t0 = performance.now();
      if (provider === "folder") await writeAtomic(`${clusterDir}/${name}.yaml`, text);
      else {await admin.request("POST", `/api/v1/namespaces/${ns}/secrets`, {
          body: JSON.parse(secretManifest(name, text)),
        });}
      await until(() => state(name) === "watching", `${name} watching`);
      watching.push((performance.now() - t0) / 1000);
      const during = socketsTo(stagingPort);
      if (during < 1) throw new Error(`expected the hub to hold a socket to staging while ${name} is watched`);
      const t1 = performance.now();
      if (provider === "folder") await Deno.remove(`${clusterDir}/${name}.yaml`);
      else await admin.request("DELETE", `/api/v1/namespaces/${ns}/secrets/${name}`);
      await until(() => state(name) === undefined, `${name} gone`);
      await registered.registry.idle(); // disengage settled: its watches, client and series are gone
      await until(() => socketsTo(stagingPort) === 0, `${name}'s sockets closed`, 120_000, 25); // fds close a moment later
      gone.push((performance.now() - t1) / 1000);
      await new Promise((r) => setTimeout(r, 1000));
      socketsLeft.push(socketsTo(stagingPort)); // still none a second later
      const left = (await series()).filter((l) => l.includes(`cluster="${name}"`));
      if (left.length) say(`series left for ${name}: ${left.join(" | ")}`);
      seriesLeft.push(left.length);
      timersLeft.push(liveTimers.size - timersBefore);
    }
    results[`registered_watching_s_${provider}`] = stats(watching);
    results[`unregistered_gone_s_${provider}`] = stats(gone);
    results[`unregistered_sockets_left_${provider}`] = Math.max(...socketsLeft);
    results[`unregistered_series_left_${provider}`] = Math.max(...seriesLeft);
    results[`unregistered_timers_left_${provider}`] = Math.max(...timersLeft);
    say(
      `${provider}: registration → watching ${JSON.stringify(stats(watching))} s; removal → gone ${
        JSON.stringify(stats(gone))
      } s; ` +
        `afterwards: sockets to staging ${Math.max(...socketsLeft)}, its series ${
          Math.max(...seriesLeft)
        }, timers vs baseline ${Math.max(...timersLeft)}`,
    );
  }
  results.series_delta_after_register_phase = (await series()).length - seriesBefore;
}
