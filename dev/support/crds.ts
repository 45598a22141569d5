// Swaps the Uuid CRD of one cluster between the production shape (crds/uuid.yaml) and the seed article's shape.
//
// Guarantees: when the returned promise resolves, the CRD is Established and the apiserver serves the requested
// shape (discovery lists `uuid/status` exactly when the status subresource is on), so the next request sees it.
// By default the swap is an in-place server-side apply by the same field manager as `clusters:up`, which keeps
// existing Uuid objects; `recreate: true` deletes the CRD (and with it every Uuid in that cluster) first.

import { REPO_ROOT } from "../build/build.ts";
import { applyCrds, CRDS_DIR, KUBECONFIG_PATH } from "../clusters/clusters.ts";
import { kubectl, KubectlError, kubectlOk } from "./kubectl.ts";
import { apiserverGet, requireClusters } from "./local_clusters.ts";

/** Name of the Uuid CRD in both shapes. */
export const UUID_CRD_NAME = "uuid.demo.operator";
/** The production CRD manifest. */
export const PRODUCTION_CRD_FILE = `${CRDS_DIR}/uuid.yaml`;
/** The seed article's CRD manifest (no status subresource). */
export const SEED_CRD_FILE = `${REPO_ROOT}/dev/support/fixtures/seed_uuid_crd.yaml`;

/** Options of {@linkcode installSeedCrd} and {@linkcode installProductionCrd}. */
export interface InstallCrdOptions {
  /** Delete the CRD (and every Uuid object in the cluster) before applying. Default false. */
  recreate?: boolean;
  /** How long to wait for the new shape to be served. Default 60 s. */
  timeoutMs?: number;
}

/** The CRD did not reach the requested shape in time. */
export class CrdInstallError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CrdInstallError";
  }
}

async function servesStatusSubresource(context: string): Promise<boolean | null> {
  const response = await apiserverGet(context, "/apis/demo.operator/v1");
  if (response.status !== 200) return null;
  const list = JSON.parse(response.body) as { resources?: { name: string }[] };
  const names = (list.resources ?? []).map((r) => r.name);
  if (!names.includes("uuid")) return null;
  return names.includes("uuid/status");
}

async function install(context: string, file: string, withStatus: boolean, options: InstallCrdOptions): Promise<void> {
  requireClusters();
  const timeoutMs = options.timeoutMs ?? 60_000;
  if (options.recreate) {
    await kubectlOk(context, ["delete", "crd", UUID_CRD_NAME, "--ignore-not-found", "--wait=true", "--timeout=60s"]);
  }
  await applyCrds(KUBECONFIG_PATH, context, [file]);
  const deadline = performance.now() + timeoutMs;
  let seen: boolean | null = null;
  while (performance.now() < deadline) {
    seen = await servesStatusSubresource(context);
    if (seen === withStatus) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new CrdInstallError(
    `cluster "${context}" did not serve the ${withStatus ? "production" : "seed"} Uuid CRD from ${file} within ` +
      `${timeoutMs / 1000}s (status subresource served: ${seen})`,
  );
}

/** Replaces the Uuid CRD of `context` with the seed article's shape (no status subresource). */
export function installSeedCrd(context: string, options: InstallCrdOptions = {}): Promise<void> {
  return install(context, SEED_CRD_FILE, false, options);
}

/** Replaces the Uuid CRD of `context` with the production shape from crds/uuid.yaml. */
export function installProductionCrd(context: string, options: InstallCrdOptions = {}): Promise<void> {
  return install(context, PRODUCTION_CRD_FILE, true, options);
}

/**
 * `kubectl apply -f file` of a CRD that other test files running at the same time may be applying too: two applies
 * that both find it missing race to create it, and the loser's AlreadyExists (or a Conflict) is retried, which then
 * finds it and patches. Other failures throw at once.
 */
export async function applySharedCrd(context: string, file: string): Promise<void> {
  for (let attempt = 1;; attempt++) {
    const r = await kubectl(context, ["apply", "-f", file]);
    if (r.code === 0) return;
    if (attempt >= 5 || !/AlreadyExists|Conflict|the object has been modified/.test(r.stderr)) {
      throw new KubectlError(context, ["apply", "-f", file], r);
    }
    await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
  }
}
