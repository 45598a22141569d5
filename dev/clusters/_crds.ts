// The CRDs of crds/: finding them, and server-side applying them with kubectl until each one is Established.

import { ClusterSetupError } from "./_cluster_setup_error.ts";
import { CRD_FIELD_MANAGER, CRDS_DIR } from "./_layout.ts";
import { setTimeout as sleep } from "node:timers/promises";

async function kubectl(kubeconfig: string, context: string, args: string[]): Promise<string> {
  const out = await new Deno.Command("kubectl", {
    args: [`--kubeconfig=${kubeconfig}`, `--context=${context}`, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output().catch((cause) => {
    throw new ClusterSetupError("could not run kubectl: is it installed and on PATH?", { cause });
  });
  if (!out.success) {
    throw new ClusterSetupError(
      `kubectl --context ${context} ${args.join(" ")} exited with code ${out.code}: ${
        new TextDecoder().decode(out.stderr).trim()
      }`,
    );
  }
  return new TextDecoder().decode(out.stdout);
}

/** The CRD manifests in crds/ (sorted paths of *.yaml, *.yml and *.json). */
export async function crdFiles(): Promise<string[]> {
  const files: string[] = [];
  try {
    for await (const entry of Deno.readDir(CRDS_DIR)) {
      if (entry.isFile && /\.(ya?ml|json)$/.test(entry.name)) files.push(`${CRDS_DIR}/${entry.name}`);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return files.sort();
}

/** Server-side applies `files` (as {@linkcode CRD_FIELD_MANAGER}) and waits until every CRD is Established. */
export async function applyCrds(kubeconfig: string, context: string, files: string[]): Promise<void> {
  if (files.length === 0) return;
  const fileArgs = files.flatMap((f) => ["-f", f]);
  await kubectl(kubeconfig, context, [
    "apply",
    "--server-side",
    "--force-conflicts",
    `--field-manager=${CRD_FIELD_MANAGER}`,
    ...fileArgs,
  ]);
  // `kubectl wait` fails at once, instead of waiting, while a just-created CRD has no status.conditions yet
  // (".status.conditions accessor error: <nil>"): ask again a few times before giving up.
  for (let attempt = 1;; attempt++) {
    try {
      await kubectl(kubeconfig, context, ["wait", "--for=condition=Established", "--timeout=60s", ...fileArgs]);
      return;
    } catch (error) {
      if (attempt >= 10 || !/accessor error/.test((error as Error).message)) throw error;
      await sleep(200);
    }
  }
}
