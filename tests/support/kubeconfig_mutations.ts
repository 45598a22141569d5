// The corpus of bad credentials: kubeconfigs generated with fast-check as mutations of valid ones, each carrying the
// outcome that the rules for untrusted kubeconfigs (issue 27) require of the hub.
//
// Guarantees: the same seed and world give the same cases, byte for byte (CORPUS_SEED replays a run). A case whose
// server is the attacker's address always carries at least one mutation that must be refused, so a hub that follows
// the rules never connects there. Every case registers under its own name (`k<id>`, or a reserved name or a weird
// context name that includes the id), so one case's outcome is told apart from every other's.
//
// Assumptions: the hub runs with `--exec-plugin-allowlist <world.allowedPlugin>`, without `--allow-http-servers`, and
// with the contexts named in `world.reserved` defined by its command line (or `in-cluster`).

import fc from "fast-check";
import { stringify } from "yaml";
import { type Draft, type Mutation, mutationArbitrary } from "./_mutation_catalog.ts";
import { applyMutation, docLevelBytes, effectOf } from "./_mutation_apply.ts";

export type { Mutation } from "./_mutation_catalog.ts";

/** The real clusters a valid kubeconfig may point at. */
export type Target = "prod" | "staging" | "dev";

/** Where a case is handed to the hub. */
export type CorpusProvider = "folder" | "secret";

/** Why a kubeconfig must (or may) be refused. */
export type Reason =
  | "token-file"
  | "file-path"
  | "auth-provider"
  | "exec"
  | "http"
  | "reserved"
  | "invalid"
  | "alias"
  | "limits";

/** What a refusal line has to say, per reason (matched against the line, case-insensitive). */
export const REASON_PATTERNS: Readonly<Record<Reason, RegExp>> = {
  "token-file": /token-?file/i,
  "file-path": /file|path|certificate|client-key/i,
  "auth-provider": /auth-provider/i,
  exec: /exec|plugin|allowlist/i,
  http: /http/i,
  reserved: /reserved|collision|command line|in-cluster/i,
  invalid: /\S/,
  alias: /YAML alias/i,
  // The bounds on untrusted kubeconfigs (issue 37): size, aliases, the number of contexts, users and clusters.
  limits: /YAML alias|larger than \d+ bytes|more than the \d+ an untrusted kubeconfig may hold/i,
};

/** The outcomes a case allows. */
export interface Expectation {
  /** It may be served, as this cluster (the Uuids of that cluster's test namespace). */
  served?: Target;
  /** It may be refused, with a line matching one of these reasons. */
  refused: Reason[];
  /** It must be refused (a rule or the format forbids it): never engaged, never served. */
  mustRefuse: boolean;
  /** It may be engaged and fail at its (real) server, the error shown: wrong, missing or oversized credentials. */
  failing: boolean;
  /** It may register nothing and say nothing: a document with no context at all (folder only). */
  ignored: boolean;
  /** A name the command line defines: that cluster must keep being served by the command line. */
  reserved?: string;
}

/** What the generator needs to know about the test's world. */
export interface CorpusWorld {
  endpoints: Readonly<Record<Target, { server: string; caPem: string; token: string }>>;
  /** Base URLs (scheme://host:port) of the attacker's stand-in; both schemes reach the same listener. */
  attacker: { http: string; https: string };
  /** A token file (beside the cluster folder) whose content, the marker, must never leave the hub. */
  markerFile: string;
  /** An exec plugin on `--exec-plugin-allowlist` by absolute path: prints an ExecCredential whose token is its first argument. */
  allowedPlugin: string;
  /** The same plugin on the allowlist by bare name, found through the hub's own PATH. */
  allowedName: string;
  /** A folder holding a program named `allowedName` that must never run (it leaves a trace). */
  evilPathDir: string;
  /** An exec plugin, in the cluster folder, not on the allowlist: leaves a trace when run. */
  forbiddenPlugin: string;
  /** The test namespace (for the namespaced-access extension). */
  namespace: string;
  /** Names the command line defines (`in-cluster` and the --kubeconfig contexts). */
  reserved: readonly string[];
}

/** One generated kubeconfig. */
export interface CorpusCase {
  id: number;
  provider: CorpusProvider;
  /** The cluster name it registers under: the Secret's name, or the context's name in a folder file. */
  name: string;
  /** The kubeconfig's entries, when it can share a folder file with other cases (folder cases only). */
  entries?: Entries;
  /** The whole document, as written to its own file or put in its Secret. */
  bytes: Uint8Array;
  /** What was done to the valid kubeconfig it started from, in order. */
  mutations: Mutation[];
  target: Target;
  /** Whether its server is the attacker's address. */
  attacker: boolean;
  expect: Expectation;
  /** Strings of this case that must never appear in the hub's output (passwords, tokens it invented). */
  secrets: string[];
}

/** A kubeconfig's three lists. */
export interface Entries {
  clusters: unknown[];
  users: unknown[];
  contexts: unknown[];
  /** Top-level keys besides the lists (junk, anchors), named after the case. */
  extra: Record<string, unknown>;
}

/** What {@linkcode generateCorpus} produces. */
export interface Corpus {
  seed: number;
  cases: CorpusCase[];
}

interface Shape {
  target: Target;
  mutations: Mutation[];
  toAttacker: boolean;
}

const shapeArbitrary: fc.Arbitrary<Shape> = fc.record({
  target: fc.constantFrom<Target>("prod", "staging", "dev"),
  mutations: fc.tuple(mutationArbitrary("primary"), fc.array(mutationArbitrary("extra"), { maxLength: 2 }))
    .map(([first, rest]) => first.kind === "doc" ? [first] : [first, ...rest.filter((m) => m.kind !== "doc")]),
  toAttacker: fc.boolean(),
});

/** The seed from `CORPUS_SEED`, or a new random one. */
export function corpusSeed(env: string | undefined = Deno.env.get("CORPUS_SEED")): number {
  if (env === undefined || env === "") return crypto.getRandomValues(new Uint32Array(1))[0] | 0;
  const n = Number(env);
  if (!Number.isInteger(n)) throw new Error(`CORPUS_SEED must be an integer; got ${JSON.stringify(env)}`);
  return n | 0;
}

/** Generates `count` cases, alternating Secret and folder (see the reserved names below), reproducibly from `seed`. */
export function generateCorpus(world: CorpusWorld, options: { seed: number; count: number }): Corpus {
  const shapes = fc.sample(shapeArbitrary, { seed: options.seed, numRuns: options.count });
  // A Secret's name is its cluster's name and unique in its namespace: a reserved name is taken by one Secret at
  // most; the other cases that take it go to the folder (where any number of files may define it).
  const takenBySecret = new Set<string>();
  const cases = shapes.map((shape, id) => {
    const reserved = shape.mutations.find((m) => m.kind === "reserved");
    let provider: CorpusProvider = id % 2 === 0 ? "secret" : "folder";
    if (reserved?.kind === "reserved" && provider === "secret") {
      const name = world.reserved[reserved.which % world.reserved.length];
      if (takenBySecret.has(name)) provider = "folder";
      takenBySecret.add(name);
    }
    return buildCase(world, shape, id, provider);
  });
  return { seed: options.seed, cases };
}

/** A short, single-line description of a case for failure messages (huge values abbreviated). */
export function describeCase(c: CorpusCase): string {
  const muts = JSON.stringify(
    c.mutations,
    (_k, v) => typeof v === "string" && v.length > 60 ? `${v.slice(0, 40)}…` : v,
  );
  return `#${c.id} ${c.provider} ${
    JSON.stringify(c.name.length > 60 ? `${c.name.slice(0, 40)}…` : c.name)
  } → ${c.target}${c.attacker ? " (server: attacker)" : ""} ${muts}`;
}

function buildCase(world: CorpusWorld, shape: Shape, id: number, provider: CorpusProvider): CorpusCase {
  const ep = world.endpoints[shape.target];
  const key = `k${id}`;
  const draft: Draft = {
    id,
    provider,
    name: key,
    contextName: key,
    cluster: { server: ep.server, "certificate-authority-data": btoa(ep.caPem) },
    user: { token: ep.token },
    context: { cluster: `${key}-cluster`, user: `${key}-user` },
    clustersBefore: [],
    clusters: [],
    users: [],
    contexts: [],
    extra: {},
    omit: new Set(),
    secrets: [],
    world,
  };
  const applied = shape.mutations.filter((m) => applyMutation(draft, m));
  const expect: Expectation = { served: shape.target, refused: [], mustRefuse: false, failing: false, ignored: false };
  for (const m of applied) {
    const e = effectOf(m, provider, world);
    expect.refused.push(...e.reasons);
    expect.mustRefuse ||= e.must === true;
    expect.failing ||= e.fails === true;
    expect.ignored ||= e.ignorable === true;
    if (e.servable === false) expect.served = undefined;
    if (e.reserved) expect.reserved = e.reserved;
  }
  if (expect.mustRefuse) {
    expect.served = undefined;
    expect.failing = false;
  }
  expect.refused = [...new Set(expect.refused)];
  // Only a kubeconfig that must be refused may name the attacker (so a hub that follows the rules never goes there),
  // and only in place of the real server (not of one a mutation already changed).
  const first = shape.mutations[0];
  const toAttacker = shape.toAttacker && expect.mustRefuse && first.kind !== "reserved" &&
    typeof draft.cluster === "object" && draft.cluster?.server === ep.server;
  if (toAttacker) draft.cluster.server = world.attacker.https;
  const entries: Entries = {
    clusters: [
      ...draft.clustersBefore,
      ...(draft.omit.has("cluster") ? [] : [{ name: `${key}-cluster`, cluster: draft.cluster }]),
      ...draft.clusters,
    ],
    users: [...(draft.omit.has("user") ? [] : [{ name: `${key}-user`, user: draft.user }]), ...draft.users],
    contexts: [
      ...(draft.omit.has("context") ? [] : [{ name: draft.contextName, context: draft.context }]),
      ...(draft.duplicateContext ? [{ name: draft.contextName, context: draft.context }] : []),
      ...draft.contexts,
    ],
    extra: draft.extra,
  };
  // The `anchors` mutation shares the user object with a top-level key: written once with an anchor, then as an alias,
  // which an untrusted kubeconfig may not use (issue 37). Only when that object is still the case's user (a later
  // mutation may have replaced it).
  const aliased = !draft.omit.has("user") && draft.extra[`x-anchor-${id}`] === draft.user;
  if (aliased) {
    expect.refused = [...new Set([...expect.refused, "alias" as const])];
    expect.mustRefuse = true;
    expect.served = undefined;
    expect.failing = false;
  }
  const current = provider === "secret" ? draft.currentContext ?? draft.contextName : null;
  const valid = kubeconfigDocument(entries, current, { aliases: aliased });
  const docBytes = docLevelBytes(valid, first);
  // A case refused as a whole (an alias, too many contexts) gets a file of its own: in a shared file it would take the
  // other cases' contexts down with it.
  const wholeRefused = aliased || shape.mutations.some((m) => m.kind === "many-contexts");
  const shareable = provider === "folder" && docBytes === undefined && expect.reserved === undefined && !wholeRefused;
  return {
    id,
    provider,
    name: provider === "secret" ? draft.name : draft.contextName,
    entries: shareable ? entries : undefined,
    bytes: docBytes ?? new TextEncoder().encode(valid),
    mutations: shape.mutations,
    target: shape.target,
    attacker: toAttacker || draft.attacker === true,
    expect,
    secrets: draft.secrets,
  };
}

/**
 * One kubeconfig document holding `entries` (several cases' entries may be concatenated), as YAML. An object that
 * occurs twice is written out in full each time, or, with `aliases` (the `anchors` mutation), once with an anchor and
 * then as an alias.
 */
export function kubeconfigDocument(
  entries: Entries,
  currentContext: string | null,
  options: { aliases?: boolean } = {},
): string {
  const doc: Record<string, unknown> = {
    apiVersion: "v1",
    kind: "Config",
    clusters: entries.clusters,
    users: entries.users,
    contexts: entries.contexts,
    ...entries.extra,
    ...(currentContext === null ? {} : { "current-context": currentContext }),
  };
  return stringify(doc, { aliasDuplicateObjects: options.aliases === true, lineWidth: 0 });
}
