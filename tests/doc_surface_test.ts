// The library surface, per entry point of deno.json "exports": "." (the quick start), "./sdk" (the whole operator SDK),
// "./resources" (custom resources and their CRDs), "./testing" (the test kit), "./hub" (embedding a Hub), "./kube"
// (Kubernetes access) and "./cli" (the command line). The package documents without a lint error or a warning, as
// JSR lints it (every entry point at once: a type one entry point names is documented at another); each entry point
// has a module doc with an example (`deno task check`, `deno check --doc`, type-checks every example), and it exports
// exactly the names listed here: a name added, moved or removed shows in this diff.

import assert from "node:assert/strict";

const ROOT = new URL("..", import.meta.url).pathname;

/** Every entry point's exports. A name in two lists is the same declaration, re-exported (types only outside "."). */
const SURFACE: Record<string, string[]> = {
  // Operator authors' quick start: define an operator (reconcile or Kopf-style handlers), its errors and helpers.
  ".": [
    "AdmissionError",
    "adopt",
    "defineHandlers",
    "defineOperator",
    "defineResource",
    "HandlerContext",
    "ignoreNotFound",
    "isConflict",
    "isNotFound",
    "kinds",
    "NewObject",
    "Operator",
    "PermanentError",
    "ReconcileScope",
    "Request",
    "ResourceClient",
    "retryOnConflict",
    "TemporaryError",
    "TerminalError",
  ],
  // The whole operator SDK: everything an operator's code may touch.
  "./sdk": [
    "AdmissionContext",
    "AdmissionError",
    "AdmissionLabelSelector",
    "AdmissionOperation",
    "AdmissionRequest",
    "AdmissionSpec",
    "AdmissionUserInfo",
    "AdmissionVerdict",
    "AdmissionWebhook",
    "adopt",
    "Adopted",
    "AdoptOptions",
    "AdoptParent",
    "BackgroundRun",
    "BackgroundTasks",
    "CacheObserver",
    "ClusterConnection",
    "DaemonContext",
    "DaemonFn",
    "DaemonResult",
    "DaemonSpec",
    "defineHandlers",
    "defineOperator",
    "DiffItem",
    "EventSink",
    "EventSubject",
    "fieldProjection",
    "FINALIZER",
    "HandlerContext",
    "HandlerFn",
    "HandlerOutcome",
    "Handlers",
    "HandlersDefinition",
    "HandlerSpec",
    "HandlerState",
    "ignoreNotFound",
    "Index",
    "IndexEntries",
    "IndexEntry",
    "Indexes",
    "IndexFn",
    "isConflict",
    "isNotFound",
    "jsonPatch",
    "JsonPatchOperation",
    "KindName",
    "kinds",
    "ListOptions",
    "LogFields",
    "Logger",
    "LogLevel",
    "MutateFn",
    "MutateHandlers",
    "NewObject",
    "ObjectMeta",
    "ObjectRef",
    "Operator",
    "OperatorDefinition",
    "OperatorDefinitionError",
    "OwnedResource",
    "OwnerReference",
    "PARENT_ANNOTATION",
    "PARENT_NAME_LABEL",
    "PARENT_RESOURCE_LABEL",
    "PartialMeta",
    "PartialObjectMetadata",
    "PatchType",
    "PermanentError",
    "Projection",
    "Reconciler",
    "ReconcileResult",
    "ReconcileScope",
    "Request",
    "ResourceClient",
    "ResourceType",
    "ResourceUse",
    "retryOnConflict",
    "RetryOptions",
    "StoredObject",
    "TemporaryError",
    "TerminalError",
    "TimerSpec",
    "trimObject",
    "UndeclaredFieldError",
    "ValidateFn",
    "ValidateHandlers",
    "Verb",
    "WatchedResource",
  ],
  // Embedders: the Hub, its options, limits, health and leader election, the built-in operators and the Logger; the
  // operator contract the Hub takes, as types.
  "./hub": [
    "AdmissionLabelSelector",
    "AdmissionOperation",
    "AdmissionRequest",
    "AdmissionUserInfo",
    "AdmissionVerdict",
    "AdmissionWebhook",
    "BackgroundRun",
    "BackgroundTasks",
    "BUILT_IN_OPERATORS",
    "BuiltInContext",
    "CacheObserver",
    "ClusterAccess",
    "ClusterAuth",
    "ClusterConnection",
    "ClusterHealth",
    "ClusterRegistration",
    "DEFAULT_LIMITS",
    "DEFAULT_OPERATORS",
    "EventSink",
    "EventSubject",
    "FailureState",
    "HealthState",
    "Hub",
    "HubHealth",
    "HubLeaderElection",
    "HubLimits",
    "HubOptions",
    "HubReadiness",
    "HubShardStatus",
    "HubShardView",
    "HubStatus",
    "JsonPatchOperation",
    "LeaderElectionSnapshot",
    "LeaseSettings",
    "ListOptions",
    "LogFields",
    "LogFormat",
    "Logger",
    "LoggerOptions",
    "LogLevel",
    "mirrorOperator",
    "MirrorOptions",
    "NewObject",
    "ObjectMeta",
    "ObjectRef",
    "Operator",
    "OperatorHealth",
    "PatchType",
    "Projection",
    "ProviderHealth",
    "Reconciler",
    "ReconcileResult",
    "ReconcileScope",
    "RegistrationCondition",
    "RegistrationProblem",
    "Request",
    "ResourceClient",
    "ResourceType",
    "ResourceUse",
    "StoredObject",
    "uuidOperator",
    "Verb",
    "WatchedResource",
  ],
  // Kubernetes access: kubeconfig and in-cluster loading, the client, paths, discovery and errors.
  "./kube": [
    "ALL_CONTEXTS",
    "ApiError",
    "apiVersionOf",
    "AuthError",
    "Clock",
    "ClusterAccess",
    "ClusterAuth",
    "ConfigError",
    "ContextCatalog",
    "CredentialPolicy",
    "DEFAULT_MAX_OBJECT_BYTES",
    "discoverResource",
    "DiscoveryClient",
    "EnvSource",
    "FailureState",
    "failureStateOf",
    "FetchLike",
    "httpStatusOf",
    "IN_CLUSTER",
    "inClusterAccess",
    "InClusterOptions",
    "isConflict",
    "isNotFound",
    "KubeClient",
    "KubeClientOptions",
    "KubeconfigContext",
    "KubeconfigText",
    "KubeconfigTextOptions",
    "KubeRequestOptions",
    "ListPage",
    "ListPageOptions",
    "loadContexts",
    "LoadContextsOptions",
    "LogFields",
    "Logger",
    "LogLevel",
    "MissingResourceError",
    "namespacePath",
    "parseKubeconfigText",
    "qualifiedName",
    "QueryValue",
    "ResourceInfo",
    "resourcePath",
    "ResourceRef",
    "ResourceType",
    "ResponseInfo",
    "retryAfterMsOf",
    "STRICT_CREDENTIAL_POLICY",
    "Timer",
    "TooLargeError",
    "TransportError",
    "UntrustedKubeconfigParser",
    "WatchEvent",
    "WatchEventType",
    "WatchOptions",
  ],
  // The command line as a function, for a binary with its own operators compiled in, and the two types it names.
  "./cli": [
    "ClusterAccess",
    "homeCluster",
    "main",
    "MainOptions",
    "Operator",
    "VERSION",
  ],
  // Custom resources defined once: typed objects and their CRDs.
  "./resources": [
    "CrdDocument",
    "crdOf",
    "defineResource",
    "isResource",
    "ObjectOf",
    "PrinterColumn",
    "Resource",
    "ResourceDefinition",
    "ResourceDefinitionError",
    "ResourceType",
    "SchemaProps",
    "StructuralSchemaError",
    "TypedObject",
  ],
  // The multi-cluster test kit: real apiservers, operators in-process, faults.
  "./testing": [
    "CrdSource",
    "eventually",
    "EventuallyOptions",
    "EventuallyTimeoutError",
    "kitCacheRoot",
    "KitClient",
    "KitNewObject",
    "KitObject",
    "KitObjectOf",
    "KitRef",
    "KUBE_VERSION",
    "KubeBinaries",
    "kubeBinaries",
    "KubeBinariesOptions",
    "KubeBuildError",
    "RunningOperators",
    "RunOptions",
    "TestEnv",
    "testEnv",
    "TestEnvError",
    "TestEnvOptions",
  ],
};

/** deno.json's "exports": entry point → file. */
const EXPORTS: Record<string, string> = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).exports;

async function deno(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

interface DocDecl {
  location: { filename: string };
  jsDoc?: { tags?: { kind: string }[] };
}
interface DocNode {
  module_doc?: { doc?: string; tags?: { kind: string }[] };
  symbols?: { name: string; declarations?: DocDecl[] }[];
}

/** `deno doc --json` of every entry point at once (one run for every test here), by entry point. */
let docs: Promise<Record<string, DocNode>> | undefined;
function docOf(entry: string): Promise<DocNode> {
  docs ??= deno("doc", "--json", ...Object.values(EXPORTS)).then((out) => {
    assert.equal(out.code, 0, out.stderr);
    return JSON.parse(out.stdout).nodes;
  });
  return docs.then((nodes) => nodes[new URL(EXPORTS[entry], `file://${ROOT}`).href] ?? {});
}

const byName = (a: string, b: string) => a.toLowerCase().localeCompare(b.toLowerCase()) || a.localeCompare(b);

Deno.test("deno.json exports exactly the entry points whose surface is listed here", () => {
  assert.deepEqual(Object.keys(EXPORTS).sort(), Object.keys(SURFACE).sort());
});

for (const [entry, expected] of Object.entries(SURFACE)) {
  Deno.test(`"${entry}" (${EXPORTS[entry]}) has a module doc with an example`, async () => {
    const moduleDoc = (await docOf(entry)).module_doc;
    assert.ok(moduleDoc?.doc, `${EXPORTS[entry]} has a module doc (a first JSDoc with @module)`);
    assert.ok(moduleDoc.tags?.some((t) => t.kind === "example"), `${EXPORTS[entry]} has an @example`);
  });

  Deno.test(`"${entry}" exports exactly its listed names`, async () => {
    const names = [...new Set(((await docOf(entry)).symbols ?? []).map((s) => s.name))];
    assert.deepEqual(names.sort(byName), [...expected].sort(byName));
  });
}

Deno.test("the package documents without a lint error or a warning (deno doc --lint on every entry point at once)", async () => {
  const lint = await deno("doc", "--lint", ...Object.values(EXPORTS));
  assert.equal(lint.code, 0, lint.stderr);
  const warnings = lint.stderr.split("\n").filter((l) => /warning/i.test(l));
  assert.deepEqual(warnings.slice(0, 3), [], `${warnings.length} warnings, e.g. the first three above`);
});

// Every example type-checks: `deno task check` runs `deno check --doc` over every file (CI runs it before the suite).
Deno.test("every exported name has an @example", async () => {
  // One run documents a declaration that several entry points re-export in full once: a name has an example when any
  // entry point's declaration of it has one.
  const names = new Set<string>();
  const withExample = new Set<string>();
  for (const entry of Object.keys(EXPORTS)) {
    for (const symbol of (await docOf(entry)).symbols ?? []) {
      names.add(symbol.name);
      for (const d of symbol.declarations ?? []) {
        if (d.jsDoc?.tags?.some((t) => t.kind === "example")) withExample.add(symbol.name);
      }
    }
  }
  const missing = [...names].filter((name) => !withExample.has(name)).sort(byName);
  assert.deepEqual(missing, [], `${missing.length} exported names without an @example`);
});
