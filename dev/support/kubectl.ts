// Runs the real kubectl against one local cluster context, with clusters/local.yaml as the only kubeconfig.

import { KUBECONFIG_PATH } from "../clusters/clusters.ts";
import { ClustersNotRunningError } from "./local_clusters.ts";

/** What kubectl printed and how it exited. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of {@linkcode kubectl}. */
export interface KubectlOptions {
  /** Text written to kubectl's stdin (use with `-f -`). */
  stdin?: string;
  /** Kill kubectl after this long. Default 60 s. */
  timeoutMs?: number;
}

/** kubectl exited with a non-zero code. */
export class KubectlError extends Error {
  readonly result: KubectlResult;
  constructor(context: string, args: string[], result: KubectlResult) {
    super(`kubectl --context ${context} ${args.join(" ")} exited with code ${result.code}: ${result.stderr.trim()}`);
    this.name = "KubectlError";
    this.result = result;
  }
}

/** Runs `kubectl --kubeconfig clusters/local.yaml --context <context> <args>`; never throws on a non-zero exit. */
export async function kubectl(context: string, args: string[], options: KubectlOptions = {}): Promise<KubectlResult> {
  try {
    Deno.statSync(KUBECONFIG_PATH);
  } catch (cause) {
    throw new ClustersNotRunningError(`no kubeconfig at ${KUBECONFIG_PATH}`, { cause });
  }
  const child = new Deno.Command("kubectl", {
    args: [`--kubeconfig=${KUBECONFIG_PATH}`, `--context=${context}`, ...args],
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const out = await child.output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** Like {@linkcode kubectl}, but resolves with stdout and throws a KubectlError (with stderr) on a non-zero exit. */
export async function kubectlOk(context: string, args: string[], options: KubectlOptions = {}): Promise<string> {
  const result = await kubectl(context, args, options);
  if (result.code !== 0) throw new KubectlError(context, args, result);
  return result.stdout;
}

/**
 * `kubectl patch KIND NAME -n NAMESPACE --type=merge -p PATCH` in `context`; a failure throws unless `check` is false
 * (clean-up paths, where the object may already be gone).
 */
export async function mergePatch(
  context: string,
  kind: string,
  namespace: string,
  name: string,
  patch: string,
  options: { check?: boolean } = {},
): Promise<void> {
  const args = ["patch", kind, name, "-n", namespace, "--type=merge", "-p", patch];
  if (options.check === false) await kubectl(context, args);
  else await kubectlOk(context, args);
}
