// Private to src/testing: the CRDs a test environment installs, from resource definitions (`defineResource`), CRD
// files (YAML or JSON, several documents each) or CRD objects; applied server-side and awaited until served.

import { parseAllDocuments } from "yaml";
import { crdOf, isResource } from "../../resources/mod.ts";
import type { Resource } from "../../resources/mod.ts";
import type { EnvCluster } from "./_env_cluster.ts";
import { TestEnvError } from "./test_env_error.ts";

/**
 * A CRD to install: a `defineResource` result, the path or URL of a CRD file, or a CRD object.
 *
 * @example
 * ```ts
 * import { type CrdSource, testEnv } from "../../../testing.ts";
 * import { Website } from "../../../examples/website_resource.ts";
 *
 * const crds: CrdSource[] = [Website, "crds/mirror.yaml", new URL("../../../crds/uuid.yaml", import.meta.url)];
 * await using env = await testEnv({ crds });
 * await env.installCrds(["examples/greeting_crd.yaml"]); // more, later: in every cluster, awaited until served
 * ```
 */
export type CrdSource = Resource | string | URL | Record<string, unknown>;

/** The parts of a CRD the kit reads. */
export interface CrdManifest {
  apiVersion: string;
  kind: "CustomResourceDefinition";
  metadata: { name: string };
  spec: { group: string; names: { plural: string }; versions: { name: string; served?: boolean }[] };
  [field: string]: unknown;
}

/** CRD files larger than this are refused (they are the test author's own files, but still read whole). */
const MAX_CRD_FILE_BYTES = 4 * 1024 * 1024;

function asCrd(value: unknown, from: string): CrdManifest {
  const v = value as Partial<CrdManifest> | null;
  if (
    v === null || typeof v !== "object" || v.kind !== "CustomResourceDefinition" ||
    typeof v.metadata?.name !== "string" || typeof v.spec?.group !== "string" ||
    typeof v.spec?.names?.plural !== "string" || !Array.isArray(v.spec?.versions)
  ) {
    const kind = v && typeof v === "object" ? `kind ${JSON.stringify(v.kind)}` : typeof v;
    throw new TestEnvError(
      `${from} is not a CustomResourceDefinition with a name, group, plural and versions (${kind})`,
    );
  }
  return v as CrdManifest;
}

async function readCrdFile(source: string | URL): Promise<CrdManifest[]> {
  const label = String(source);
  let text: string;
  try {
    if (typeof source === "string" || source.protocol === "file:") {
      const info = await Deno.stat(source);
      if (info.size > MAX_CRD_FILE_BYTES) throw new Error(`${info.size} bytes, more than ${MAX_CRD_FILE_BYTES}`);
      text = await Deno.readTextFile(source);
    } else {
      const response = await fetch(source);
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      text = await response.text();
      if (text.length > MAX_CRD_FILE_BYTES) throw new Error(`more than ${MAX_CRD_FILE_BYTES} bytes`);
    }
  } catch (cause) {
    throw new TestEnvError(`could not read the CRD file ${label}: ${(cause as Error).message}`, { cause });
  }
  const crds: CrdManifest[] = [];
  for (const [i, doc] of parseAllDocuments(text).entries()) {
    if (doc.errors.length > 0) {
      throw new TestEnvError(`the CRD file ${label} is not valid YAML (document ${i + 1}): ${doc.errors[0].message}`);
    }
    const value = doc.toJS();
    if (value === null || value === undefined) continue;
    crds.push(asCrd(value, `document ${i + 1} of ${label}`));
  }
  if (crds.length === 0) throw new TestEnvError(`the CRD file ${label} holds no CustomResourceDefinition`);
  return crds;
}

/** The CRDs of `sources`, in order (a file may hold several). */
export async function crdManifests(sources: readonly CrdSource[]): Promise<CrdManifest[]> {
  const out: CrdManifest[] = [];
  for (const source of sources) {
    if (typeof source === "string" || source instanceof URL) out.push(...await readCrdFile(source));
    else if (isResource(source)) out.push(crdOf(source) as unknown as CrdManifest);
    else out.push(asCrd(source, "a CRD object"));
  }
  return out;
}

/** Applies `crds` server-side in `cluster` and resolves once each is Established and served by discovery. */
export async function installCrds(cluster: EnvCluster, crds: readonly CrdManifest[], timeoutMs: number): Promise<void> {
  const base = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  await Promise.all(crds.map(async (crd) => {
    const applied = await cluster.request(
      "PATCH",
      `${base}/${encodeURIComponent(crd.metadata.name)}?fieldManager=operator-hub-testing&force=true`,
      crd,
      "application/apply-patch+yaml",
    );
    if (applied.status >= 300) {
      throw new TestEnvError(
        `cluster "${cluster.name}" refused CRD ${crd.metadata.name}: HTTP ${applied.status} ${
          applied.body.slice(0, 500)
        }`,
      );
    }
    const version = crd.spec.versions.find((v) => v.served !== false)?.name ?? crd.spec.versions[0]?.name;
    const deadline = performance.now() + timeoutMs;
    while (true) {
      const got = await cluster.request("GET", `${base}/${encodeURIComponent(crd.metadata.name)}`);
      const conditions = got.status === 200
        ? (JSON.parse(got.body) as { status?: { conditions?: { type: string; status: string }[] } }).status
          ?.conditions ?? []
        : [];
      if (conditions.some((c) => c.type === "Established" && c.status === "True")) {
        const discovery = await cluster.request("GET", `/apis/${crd.spec.group}/${version}`);
        if (discovery.status === 200 && discovery.body.includes(`"name":"${crd.spec.names.plural}"`)) return;
      }
      if (performance.now() > deadline) {
        throw new TestEnvError(
          `CRD ${crd.metadata.name} was not Established and served in cluster "${cluster.name}" within ` +
            `${timeoutMs / 1000} s (conditions ${JSON.stringify(conditions)})`,
        );
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }));
}
