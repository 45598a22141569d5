// The mutations of the credential corpus as plain data (printable, replayable), and their fast-check arbitraries.
// Private to tests/support: kubeconfig_mutations.ts is the surface.

import fc from "fast-check";
import type { CorpusProvider, CorpusWorld } from "./kubeconfig_mutations.ts";

/** How a path-valued field points somewhere: the marker token file, a relative path, a file that does not exist. */
export type PathChoice = "marker" | "relative" | "missing";

/** One change to a valid kubeconfig. */
export type Mutation =
  | { kind: "token-file"; key: "tokenFile" | "token-file"; keepToken: boolean; path: PathChoice }
  | { kind: "file-path"; key: "client-certificate" | "client-key" | "certificate-authority"; path: PathChoice }
  | { kind: "auth-provider"; provider: "gcp" | "azure" | "oidc"; cmdPath: boolean }
  | { kind: "exec-forbidden"; command: "absolute" | "bare" | "relative" | "interpreter" }
  | { kind: "exec-allowed"; path: "exact" | "dotdot" }
  | { kind: "exec-env"; name: "PATH" | "PATH-and-HOME" }
  | { kind: "http"; host: "attacker" | "real" }
  | { kind: "server"; value: "file" | "garbage" | "empty" | "number" | "missing" | "no-host" | "ftp" | "list" }
  | { kind: "ca-data"; value: "not-base64" | "not-pem" | "number" }
  | { kind: "cert-data"; value: "not-base64" | "without-key" | "not-pem" }
  | {
    kind: "missing";
    what: "cluster-entry" | "user-entry" | "context-section" | "cluster-section" | "cluster-ref" | "user-ref";
  }
  | {
    kind: "wrong-type";
    field: "token-number" | "token-list" | "server-map" | "context-string" | "user-string" | "exec-string";
  }
  | { kind: "duplicate"; what: "context" | "cluster-first-real" | "cluster-first-garbage" }
  | { kind: "current-context"; value: "undefined-name" | "absent-two-contexts" }
  | { kind: "huge"; field: "token" | "server-path" | "name" | "namespace" | "ca-data" | "junk"; size: number }
  | { kind: "reserved"; which: number }
  | { kind: "weird-name"; chars: string }
  | { kind: "proxy"; value: "ftp" | "socks-dead" }
  | {
    kind: "maybe";
    what: "insecure" | "tls-server-name" | "basic-auth" | "userinfo-url" | "impersonate" | "wrong-token";
    secret: string;
  }
  | { kind: "benign"; what: "namespace-scope" | "plain-namespace" | "junk" | "anchors"; junk: unknown }
  | { kind: "doc"; variant: "not-yaml"; n: number }
  | { kind: "doc"; variant: "binary"; bytes: number[] }
  | { kind: "doc"; variant: "top-type"; as: "list" | "scalar" | "number" | "empty" | "null" }
  | { kind: "doc"; variant: "section-type"; section: "clusters" | "users" | "contexts"; as: "mapping" | "string" }
  | { kind: "doc"; variant: "deep"; depth: number }
  | { kind: "doc"; variant: "alias-bomb"; levels: number; width: number }
  | { kind: "doc"; variant: "anchor-padded"; bytes: number }
  | { kind: "doc"; variant: "alias-heavy"; bytes: number }
  | { kind: "many-contexts"; count: number };

/** The kubeconfig being mutated, before it is written out. */
export interface Draft {
  id: number;
  provider: CorpusProvider;
  /** The Secret's name (Secret cases). */
  name: string;
  contextName: string;
  currentContext?: string;
  cluster: Record<string, unknown>;
  user: Record<string, unknown>;
  context: Record<string, unknown>;
  /** Entries added besides the case's own (clustersBefore: ahead of it, so they win a name shared with it). */
  clustersBefore: unknown[];
  clusters: unknown[];
  users: unknown[];
  contexts: unknown[];
  extra: Record<string, unknown>;
  /** The case's own context written twice. */
  duplicateContext?: boolean;
  /** The case's own entries left out. */
  omit: Set<"cluster" | "user" | "context">;
  secrets: string[];
  /** Set once a mutation changed or replaced the user section (a context without a user makes it moot). */
  userTouched?: boolean;
  /** Set when a mutation pointed the server at the attacker itself. */
  attacker?: boolean;
  world: CorpusWorld;
}

const secretText = fc.stringMatching(/^[a-z0-9]{24}$/).map((s) => `corpus-${s}`);

const pathChoice = fc.constantFrom<PathChoice>("marker", "relative", "missing");

/** Any JSON-ish junk, nested a few levels, for fields nobody should read. */
const junk = fc.jsonValue({ maxDepth: 4 });

const common = {
  tokenFile: fc.record({
    kind: fc.constant("token-file" as const),
    key: fc.constantFrom("tokenFile" as const, "token-file" as const),
    keepToken: fc.boolean(),
    path: pathChoice,
  }),
  execForbidden: fc.record({
    kind: fc.constant("exec-forbidden" as const),
    command: fc.constantFrom("absolute" as const, "bare" as const, "relative" as const, "interpreter" as const),
  }),
  http: fc.record({ kind: fc.constant("http" as const), host: fc.constantFrom("attacker" as const, "real" as const) }),
  huge: (fields: ("token" | "server-path" | "name" | "namespace" | "ca-data" | "junk")[]) =>
    fc.record({
      kind: fc.constant("huge" as const),
      field: fc.constantFrom(...fields),
      size: fc.integer({ min: 10_000, max: 100_000 }),
    }),
  weirdName: fc.record({
    kind: fc.constant("weird-name" as const),
    chars: fc.oneof(
      fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }),
      fc.constantFrom("/x", "/../y", " spaced", ".", "UPPER", "-dash", ":colon", "\nline", "\u0000nul", "*", "all"),
    ),
  }),
  maybe: fc.record({
    kind: fc.constant("maybe" as const),
    what: fc.constantFrom(
      "insecure" as const,
      "tls-server-name" as const,
      "basic-auth" as const,
      "userinfo-url" as const,
      "impersonate" as const,
      "wrong-token" as const,
    ),
    secret: secretText,
  }),
  benign: fc.record({
    kind: fc.constant("benign" as const),
    what: fc.constantFrom(
      "namespace-scope" as const,
      "plain-namespace" as const,
      "junk" as const,
      "anchors" as const,
    ),
    junk,
  }),
};

/** Sizes of the hostile documents: 16-250 KiB mostly, 256 KiB-1 MiB (less the Secret's own overhead) one time in four. */
const hostileBytes = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 16 * 1024, max: 250 * 1024 }) },
  { weight: 1, arbitrary: fc.integer({ min: 256 * 1024, max: 1_040_000 }) },
);

const docMutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("doc" as const), variant: fc.constant("not-yaml" as const), n: fc.nat(4) }),
  fc.record({
    kind: fc.constant("doc" as const),
    variant: fc.constant("binary" as const),
    bytes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 2048 }),
  }),
  fc.record({
    kind: fc.constant("doc" as const),
    variant: fc.constant("top-type" as const),
    as: fc.constantFrom("list" as const, "scalar" as const, "number" as const, "empty" as const, "null" as const),
  }),
  fc.record({
    kind: fc.constant("doc" as const),
    variant: fc.constant("section-type" as const),
    section: fc.constantFrom("clusters" as const, "users" as const, "contexts" as const),
    as: fc.constantFrom("mapping" as const, "string" as const),
  }),
  fc.record({
    kind: fc.constant("doc" as const),
    variant: fc.constant("deep" as const),
    // Mostly a few thousand levels; now and then a few hundred thousand (a Secret holds up to 1 MiB).
    depth: fc.oneof(
      { weight: 9, arbitrary: fc.integer({ min: 1_000, max: 20_000 }) },
      { weight: 1, arbitrary: fc.integer({ min: 200_000, max: 350_000 }) },
    ),
  }),
  fc.record({
    kind: fc.constant("doc" as const),
    variant: fc.constant("alias-bomb" as const),
    levels: fc.integer({ min: 5, max: 12 }),
    width: fc.integer({ min: 9, max: 16 }),
  }),
  // Issue 37: anchors each aliased once, and an alias bomb as wide as the size allows; mostly within the 256 KiB an
  // untrusted kubeconfig may have (so the parser sees them), now and then up to 1 MiB (a Secret's limit).
  fc.record({ kind: fc.constant("doc" as const), variant: fc.constant("anchor-padded" as const), bytes: hostileBytes }),
  fc.record({ kind: fc.constant("doc" as const), variant: fc.constant("alias-heavy" as const), bytes: hostileBytes }),
);

const primary: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 3, arbitrary: common.benign },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("exec-env" as const),
      name: fc.constantFrom("PATH" as const, "PATH-and-HOME" as const),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("exec-allowed" as const),
      path: fc.constantFrom("exact" as const, "dotdot" as const),
    }),
  },
  { weight: 8, arbitrary: common.tokenFile },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("file-path" as const),
      key: fc.constantFrom(
        "client-certificate" as const,
        "client-key" as const,
        "certificate-authority" as const,
      ),
      path: pathChoice,
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("auth-provider" as const),
      provider: fc.constantFrom("gcp" as const, "azure" as const, "oidc" as const),
      cmdPath: fc.boolean(),
    }),
  },
  { weight: 7, arbitrary: common.execForbidden },
  { weight: 6, arbitrary: common.http },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("server" as const),
      value: fc.constantFrom(
        "file" as const,
        "garbage" as const,
        "empty" as const,
        "number" as const,
        "missing" as const,
        "no-host" as const,
        "ftp" as const,
        "list" as const,
      ),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("ca-data" as const),
      value: fc.constantFrom("not-base64" as const, "not-pem" as const, "number" as const),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("cert-data" as const),
      value: fc.constantFrom("not-base64" as const, "without-key" as const, "not-pem" as const),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("missing" as const),
      what: fc.constantFrom(
        "cluster-entry" as const,
        "user-entry" as const,
        "context-section" as const,
        "cluster-section" as const,
        "cluster-ref" as const,
        "user-ref" as const,
      ),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("wrong-type" as const),
      field: fc.constantFrom(
        "token-number" as const,
        "token-list" as const,
        "server-map" as const,
        "context-string" as const,
        "user-string" as const,
        "exec-string" as const,
      ),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("duplicate" as const),
      what: fc.constantFrom("context" as const, "cluster-first-real" as const, "cluster-first-garbage" as const),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("current-context" as const),
      value: fc.constantFrom("undefined-name" as const, "absent-two-contexts" as const),
    }),
  },
  { weight: 7, arbitrary: common.huge(["token", "server-path", "name", "namespace", "ca-data", "junk"]) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("reserved" as const), which: fc.nat(99) }) },
  { weight: 3, arbitrary: common.weirdName },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("proxy" as const),
      value: fc.constantFrom("ftp" as const, "socks-dead" as const),
    }),
  },
  { weight: 5, arbitrary: common.maybe },
  { weight: 16, arbitrary: docMutation },
  // Issue 37: more contexts than an untrusted kubeconfig may hold (200), up to 5,000.
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("many-contexts" as const),
      count: fc.oneof(fc.integer({ min: 201, max: 1_000 }), fc.integer({ min: 1_001, max: 5_000 })),
    }),
  },
);

const extra: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 6, arbitrary: common.benign },
  { weight: 1, arbitrary: common.weirdName },
  { weight: 1, arbitrary: common.maybe },
  { weight: 1, arbitrary: common.huge(["namespace", "junk"]) },
  { weight: 1, arbitrary: fc.oneof(common.tokenFile, common.execForbidden, common.http) },
);

/** The first mutation of a case (anything, a whole-document one included), or one of the few that follow it. */
export function mutationArbitrary(role: "primary" | "extra"): fc.Arbitrary<Mutation> {
  return role === "primary" ? primary : extra;
}
