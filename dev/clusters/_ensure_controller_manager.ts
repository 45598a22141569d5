// Ensuring each cluster's kube-controller-manager in `up`: reuse one that deletes a namespace, else (re)start it.

import { runsCurrentBinary, runsWithArgs, stopPid } from "./_process.ts";
import {
  controllerManagerAlive,
  controllerManagerArgs,
  ControllerManagerError,
  probeNamespaceDeletion,
  spawnControllerManager,
} from "./_controller_manager.ts";
import { apiserverRequest } from "./_apiserver.ts";
import { CLIENT_PKI, DEFAULT_READY_TIMEOUT_MS, SERVICE_ACCOUNT_KEY } from "./_layout.ts";
import {
  type ApiserverRecord,
  type ClustersState,
  controllerManagerRecord,
  type Outcome,
  writeState,
} from "./_state.ts";

/** What happened to one controller manager in `up`, and how long its namespace probe took. */
export interface ControllerManagerOutcome {
  outcome: Outcome;
  namespaceDeletionSeconds: number;
}

/**
 * Makes the controller manager of `apiserver` work: a running one with the current binary and flags is reused if it
 * deletes a namespace within the ready timeout; anything else is (re)started and must then delete one within the
 * ready timeout (its informers sync first). How long the deletion took is returned, for the 10 s health line.
 */
export async function ensureControllerManager(
  state: ClustersState,
  apiserver: ApiserverRecord,
): Promise<ControllerManagerOutcome> {
  const record = controllerManagerRecord(state, apiserver.name);
  const request = (path: string, init?: { method?: string; body?: string; contentType?: string }) =>
    apiserverRequest(apiserver, path, init);
  const args = controllerManagerArgs(record, apiserver, CLIENT_PKI, SERVICE_ACCOUNT_KEY);
  const isNew = record.pid === null;
  if (controllerManagerAlive(record)) {
    if (runsCurrentBinary(record.pid!) && runsWithArgs(record.pid!, args)) {
      try {
        const seconds = await probeNamespaceDeletion(record, request, DEFAULT_READY_TIMEOUT_MS);
        return { outcome: "reused", namespaceDeletionSeconds: seconds };
      } catch (error) {
        if (!(error instanceof ControllerManagerError)) throw error;
        // Wedged (or exited meanwhile): restart below.
      }
    }
    if (controllerManagerAlive(record)) await stopPid(record.pid!);
  }
  await spawnControllerManager(record, apiserver, CLIENT_PKI, SERVICE_ACCOUNT_KEY);
  await writeState(state);
  const seconds = await probeNamespaceDeletion(record, request, DEFAULT_READY_TIMEOUT_MS);
  return { outcome: isNew ? "started" : "restarted", namespaceDeletionSeconds: seconds };
}
