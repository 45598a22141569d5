// The real helm v4 binary (built by dev/build/build_helm.ts) run against the chart and the local clusters.
// deno-lint-ignore-file no-explicit-any -- rendered manifests are checked field by field by the tests.

import assert from "node:assert/strict";
import YAML from "yaml";
import { ensureHelm } from "../../dev/build/build_helm.ts";
import { KUBECONFIG_PATH } from "../support/mod.ts";
import { ROOT } from "./_support.ts";

/** The chart's folder. */
export const CHART_DIR = `${ROOT}deploy/helm/operator-hub`;

/** What helm printed and how it exited. */
export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** helm exited with a non-zero code. */
export class HelmError extends Error {
  readonly result: HelmResult;
  constructor(args: string[], result: HelmResult) {
    super(`helm ${args.join(" ")} exited with code ${result.code}: ${result.stderr.trim()}`);
    this.name = "HelmError";
    this.result = result;
  }
}

/**
 * Runs helm with its config, cache and data folders under .cache/helm-home (never the user's), and
 * clusters/local.yaml as the only kubeconfig. Never throws on a non-zero exit.
 *
 * The first call in a fresh checkout builds helm (minutes); later ones find it cached by its stamp.
 */
export async function helm(args: string[], options: { timeoutMs?: number } = {}): Promise<HelmResult> {
  const { helm: bin } = await ensureHelm();
  const home = `${ROOT}.cache/helm-home`;
  const out = await new Deno.Command(bin, {
    args,
    cwd: ROOT,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: home,
      HELM_CONFIG_HOME: `${home}/config`,
      HELM_CACHE_HOME: `${home}/cache`,
      HELM_DATA_HOME: `${home}/data`,
      KUBECONFIG: KUBECONFIG_PATH,
      NO_COLOR: "1",
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    // Hang guard only: a template or an install against the local clusters takes seconds.
    signal: AbortSignal.timeout(options.timeoutMs ?? 180_000),
  }).output();
  const d = new TextDecoder();
  return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
}

/** Like {@linkcode helm}, but resolves with stdout and throws a HelmError (with stderr) on a non-zero exit. */
export async function helmOk(args: string[], options: { timeoutMs?: number } = {}): Promise<string> {
  const result = await helm(args, options);
  if (result.code !== 0) throw new HelmError(args, result);
  return result.stdout;
}

/** `helm template RELEASE deploy/helm/operator-hub -n NAMESPACE [args]` as parsed documents. */
export async function helmTemplate(release: string, namespace: string, args: string[] = []): Promise<any[]> {
  const text = await helmOk(["template", release, CHART_DIR, "--namespace", namespace, ...args]);
  return parseDocs(text);
}

/** Parses a multi-document YAML stream as Kubernetes does (YAML 1.1: `0440` is octal), dropping empty documents. */
export function parseDocs(text: string): any[] {
  return YAML.parseAllDocuments(text, { version: "1.1" }).map((d) => d.toJS()).filter(Boolean);
}

/** The documented example values files, as paths relative to the repository root. */
export function exampleValuesFiles(): string[] {
  return [...Deno.readDirSync(`${CHART_DIR}/examples`)]
    .filter((e) => e.isFile && e.name.endsWith(".yaml"))
    .map((e) => `deploy/helm/operator-hub/examples/${e.name}`)
    .sort();
}

/** `kind/name` (and namespace when set) of each document, sorted: what a listing compares. */
export function objectKeys(docs: any[]): string[] {
  return docs.map((d) => `${d.kind}/${d.metadata.namespace ? `${d.metadata.namespace}/` : ""}${d.metadata.name}`)
    .sort();
}

/** The cluster flags of a hub command line (`--clusters`, `--namespace`, `--cluster-secrets`, each with its value). */
export function clusterFlags(args: string[]): string[] {
  return args.flatMap((a, i) => ["--clusters", "--namespace", "--cluster-secrets"].includes(a) ? [a, args[i + 1]] : []);
}

/** The one document of `kind` (and `name`), failing with a listing of what was rendered otherwise. */
export function only(docs: any[], kind: string, name?: string): any {
  const found = docs.filter((d) => d.kind === kind && (name === undefined || d.metadata.name === name));
  assert.equal(found.length, 1, `exactly one ${kind}${name ? ` ${name}` : ""} in ${objectKeys(docs).join(", ")}`);
  return found[0];
}

/** The hub container's args of a rendered Deployment. */
export function argsOf(docs: any[]): string[] {
  return only(docs, "Deployment").spec.template.spec.containers[0].args;
}
