// registered_clusters --phases rotate: credential rotation of a registered cluster through its file and through
// cluster:add's Secret, the old token revoked each time: relists, watch restarts and errors it cost.

import { loadContexts } from "../../src/kube/mod.ts";
import { addCluster } from "../../src/registration/cluster_registration.ts";
import { kubectl, kubectlOk } from "../../dev/support/mod.ts";
import { KUBECONFIG_PATH } from "../../dev/clusters/clusters.ts";
import { kubeconfig, type RegisteredContext, until } from "./_context.ts";

/** The rotate phase; adds its keys to `ctx.results`. */
export async function rotatePhase(ctx: RegisteredContext): Promise<void> {
  const { clusterDir, hub, ns, registered, results, say, series, state, writeAtomic } = ctx;
  // Folder: a token bound to an anchor Secret in staging; the file rewritten with a new one; the old one revoked.
  const sa = "bench-rotation";
  await kubectl("staging", ["create", "namespace", ns]);
  await kubectlOk("staging", ["create", "serviceaccount", sa, "-n", ns]);
  await kubectlOk("staging", [
    "create",
    "clusterrolebinding",
    `${ns}-rotation`,
    "--clusterrole=cluster-admin",
    `--serviceaccount=${ns}:${sa}`,
  ]);
  const boundToken = async (anchor: string) => {
    await kubectlOk("staging", ["create", "secret", "generic", anchor, "-n", ns]);
    return (await kubectlOk("staging", [
      "create",
      "token",
      sa,
      "-n",
      ns,
      "--bound-object-kind=Secret",
      `--bound-object-name=${anchor}`,
      "--duration=1h",
    ])).trim();
  };
  const errorsOf = (name: string) =>
    series().then((ls) =>
      ls.filter((l) =>
        l.startsWith("rest_client_requests_total") && l.includes(`cluster="${name}"`) && /code="(4|5|error)/.test(l)
      )
        .reduce((n, l) => n + Number(l.split(" ").pop()), 0)
    );
  const measure = async (name: string, rotate: (i: number) => Promise<void>) => {
    const b = hub.health().clusters[name];
    const errorsBefore = await errorsOf(name);
    const swapsBefore = registered.registry.registered().find((c) => c.name === name)!.credentialSwaps;
    for (let i = 1; i <= 3; i++) {
      await rotate(i);
      await until(
        () => registered.registry.registered().find((c) => c.name === name)!.credentialSwaps >= swapsBefore + i,
        "swap",
      );
      // A write after the revocation proves the new token is in use.
      await kubectlOk("staging", ["apply", "-f", "-"], {
        stdin: `apiVersion: demo.operator/v1\nkind: Uuid\nmetadata: {name: ${name}-${i}, namespace: ${ns}}\n`,
      });
      await until(() => {
        const o = hub.health().clusters[name];
        return o?.objects === i;
      }, "object seen");
      await until(() => hub.health().controller.queued === 0 && hub.health().controller.inFlight === 0, "reconciled");
    }
    const a = hub.health().clusters[name];
    return {
      rotations: 3,
      relists: a.relists - b.relists,
      watch_restarts: a.connectAttempts - b.connectAttempts,
      errors: (await errorsOf(name)) - errorsBefore + (a.lastError ? 1 : 0),
      re_registered: a.registeredAt !== b.registeredAt,
    };
  };
  const fname = "rot-folder";
  await writeAtomic(`${clusterDir}/${fname}.yaml`, kubeconfig("staging", fname, await boundToken(`${fname}-0`)));
  await until(() => state(fname) === "watching", "folder rotation cluster watching");
  results.rotation_folder = await measure(fname, async (i) => {
    await writeAtomic(`${clusterDir}/${fname}.yaml`, kubeconfig("staging", fname, await boundToken(`${fname}-${i}`)));
    await new Promise((r) => setTimeout(r, 3000)); // the hub's grace, as cluster:add gives it
    await kubectlOk("staging", ["delete", "secret", `${fname}-${i - 1}`, "-n", ns]); // revokes the old token
  });
  await kubectlOk("staging", ["delete", "uuid", "--all", "-n", ns]);
  say(`rotation through a file: ${JSON.stringify(results.rotation_folder)}`);
  await Deno.remove(`${clusterDir}/${fname}.yaml`);
  await until(() => state(fname) === undefined, "gone");

  // Secret: cluster:add itself (TokenRequest bound to an anchor; re-run = rotation; old anchor deleted = revoked).
  const sname = "rot-secret";
  const catalog = await loadContexts({ files: [KUBECONFIG_PATH] });
  const [target, home] = catalog.select(["staging", "prod"]);
  const add = () =>
    addCluster({
      target,
      name: sname,
      registration: { kind: "secret", hub: home, namespace: ns },
      tokenTtlSeconds: 3600,
      revokeAfterMs: 3000,
      root: new URL("../..", import.meta.url).pathname,
      print: () => {},
    });
  await add();
  await until(() => state(sname) === "watching", "secret rotation cluster watching");
  results.rotation_secret = await measure(sname, () => add());
  say(
    `rotation through a Secret (cluster:add re-run, old token revoked): ${JSON.stringify(results.rotation_secret)}`,
  );
  await kubectlOk("staging", ["delete", "uuid", "--all", "-n", ns]);
  await kubectlOk("prod", ["delete", "secret", sname, "-n", ns]);
  await until(() => state(sname) === undefined, "gone");
  await kubectl("staging", ["delete", "clusterrolebinding", `${ns}-rotation`]);
}
