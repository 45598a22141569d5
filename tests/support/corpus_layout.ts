// Where each corpus kubeconfig goes: folder files (cases that can share one are batched, many contexts per file) and
// labelled Secrets (one per case), and the source name each provider will report for it.

import type { CaseSource } from "./corpus_verdicts.ts";
import { type CorpusCase, type Entries, kubeconfigDocument } from "./kubeconfig_mutations.ts";

/** The label and data key of multicluster-runtime's kubeconfig Secrets. */
export const KUBECONFIG_SECRET_LABEL = "sigs.k8s.io/multicluster-runtime-kubeconfig";

/** What to write and create for a corpus. */
export interface CorpusLayout {
  /** Files for `--cluster-dir`, by absolute path. */
  files: { path: string; bytes: Uint8Array }[];
  /** Secret manifests for the `--cluster-secrets` namespace. */
  secrets: Record<string, unknown>[];
  /** Each case's source as its provider reports it, by case id. */
  sources: Map<number, CaseSource>;
}

/** Options of {@linkcode layoutCorpus}. */
export interface LayoutOptions {
  clusterDir: string;
  namespace: string;
  /** Shareable folder cases per file. Default 20. */
  perFile?: number;
  /**
   * Bytes of case documents per shared file, at most (a case larger than this alone gets a file of its own). Default
   * 128 KiB: half the 256 KiB an untrusted kubeconfig may have, so a file of several large cases is never refused for
   * its size as a whole.
   */
  bytesPerFile?: number;
}

/**
 * Lays the corpus out. Folder cases with their own entries share files (`batch-N.yaml`, at most `perFile` cases and
 * about `bytesPerFile` bytes each), the others get one file each (`case-ID.yaml`); every Secret case is one Secret
 * named after the case.
 */
export function layoutCorpus(cases: readonly CorpusCase[], options: LayoutOptions): CorpusLayout {
  const perFile = options.perFile ?? 20;
  const bytesPerFile = options.bytesPerFile ?? 128 * 1024;
  let batchBytes = 0;
  const files: CorpusLayout["files"] = [];
  const secrets: Record<string, unknown>[] = [];
  const sources = new Map<number, CaseSource>();
  let batch: CorpusCase[] = [];
  const flush = () => {
    if (batch.length === 0) return;
    const path = `${options.clusterDir}/batch-${files.length}.yaml`;
    const merged: Entries = { clusters: [], users: [], contexts: [], extra: {} };
    for (const c of batch) {
      merged.clusters.push(...c.entries!.clusters);
      merged.users.push(...c.entries!.users);
      merged.contexts.push(...c.entries!.contexts);
      Object.assign(merged.extra, c.entries!.extra);
      sources.set(c.id, { source: path });
    }
    files.push({ path, bytes: new TextEncoder().encode(kubeconfigDocument(merged, null)) });
    batch = [];
    batchBytes = 0;
  };
  for (const c of cases) {
    if (c.provider === "secret") {
      secrets.push(secretManifest(c, options.namespace));
      sources.set(c.id, { source: `${options.namespace}/${c.name}` });
    } else if (c.entries) {
      if (batch.length > 0 && batchBytes + c.bytes.length > bytesPerFile) flush();
      batch.push(c);
      batchBytes += c.bytes.length;
      if (batch.length >= perFile) flush();
    } else {
      const path = `${options.clusterDir}/case-${c.id}.yaml`;
      files.push({ path, bytes: c.bytes });
      sources.set(c.id, { source: path });
    }
  }
  flush();
  return { files, secrets, sources };
}

function secretManifest(c: CorpusCase, namespace: string): Record<string, unknown> {
  let bin = "";
  for (const b of c.bytes) bin += String.fromCharCode(b);
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: c.name, namespace, labels: { [KUBECONFIG_SECRET_LABEL]: "true" } },
    data: { kubeconfig: btoa(bin) },
  };
}
