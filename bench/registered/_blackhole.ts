// registered_clusters --phases blackhole: 5 clusters registered at once → all watching, without and with a 6th
// whose apiserver is a black hole (it must not hold the others up).

import { FaultProxy } from "../../dev/support/mod.ts";
import { kubeconfig, type RegisteredContext, stats, until } from "./_context.ts";

/** The blackhole phase; adds its key to `ctx.results`. */
export async function blackholePhase(ctx: RegisteredContext): Promise<void> {
  const { clusterDir, results, say, staging, stagingPort, state, writeAtomic } = ctx;
  const proxy = FaultProxy.start({ targetPort: stagingPort, mode: "blackhole" });
  const runs: Record<string, number[]> = { without: [], with: [] };
  for (let r = 0; r < 6; r++) {
    const withHole = r % 2 === 1;
    const names = Array.from({ length: 5 }, (_, i) => `bh${r}-${i}`);
    const t0 = performance.now();
    await Promise.all([
      ...names.map((n) => writeAtomic(`${clusterDir}/${n}.yaml`, kubeconfig("staging", n, staging.token))),
      ...(withHole
        ? [
          writeAtomic(
            `${clusterDir}/hole${r}.yaml`,
            kubeconfig("staging", `hole${r}`, staging.token, `https://127.0.0.1:${proxy.port}`),
          ),
        ]
        : []),
    ]);
    await until(() => names.every((n) => state(n) === "watching"), "5 clusters watching");
    runs[withHole ? "with" : "without"].push((performance.now() - t0) / 1000);
    if (withHole && state(`hole${r}`) === "watching") throw new Error("the black-holed cluster cannot be watching");
    for (const n of [...names, ...(withHole ? [`hole${r}`] : [])]) await Deno.remove(`${clusterDir}/${n}.yaml`);
    await until(() => [...names, `hole${r}`].every((n) => state(n) === undefined), "removed");
  }
  await proxy.close();
  results.blackhole_5_watching_s = { without: stats(runs.without), with: stats(runs.with) };
  say(
    `5 clusters registered at once → all watching: without a black-holed 6th ${
      JSON.stringify(stats(runs.without))
    } s, with it ${JSON.stringify(stats(runs.with))} s`,
  );
}
