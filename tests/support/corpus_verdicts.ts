// Judges one corpus kubeconfig from the hub's /status: what happened to it, and whether its expectation allows that.
// deno-lint-ignore-file no-explicit-any -- /status is JSON the judge checks field by field.
//
// Guarantees: pure (a /status document in, a verdict out), so every rule of judgement is unit-tested without a hub.
// A case is judged on its own entries only: its name's /status entry and the errors its provider lists for its own
// source (the Secret `namespace/name`, or the folder file it was written to).

import { type CorpusCase, REASON_PATTERNS, type Target } from "./kubeconfig_mutations.ts";

/** What the hub did with a case. */
export type Observed =
  | "served" // engaged and watching, from the case's own provider
  | "failing" // engaged, and its server answers with an error shown in /status
  | "refused" // not engaged, with a line saying why
  | "ignored" // no entry and no line at all
  | "pending"; // engaged and still connecting or syncing, no error yet

/** Where a case was handed to the hub. */
export interface CaseSource {
  /** As the provider names it in /status: `namespace/name` for a Secret, the file's absolute path for the folder. */
  source: string;
}

/** The outcome of judging one case. */
export interface Verdict {
  observed: Observed;
  /** The line that refused it or the error it fails with, if any. */
  line?: string;
  /** Why the outcome is wrong for this case; undefined when it is right. */
  problem?: string;
}

const ENGAGED_FAILING = new Set(["unauthorized", "forbidden", "unreachable", "connecting", "syncing", "missing-crd"]);

/** The case's own errors in its provider's section: for its source, and for its name or the whole source. */
function ownErrors(
  c: CorpusCase,
  where: CaseSource,
  status: any,
): { source: string; cluster?: string; error: string }[] {
  const errors: any[] = status?.providers?.[c.provider]?.errors ?? [];
  return errors.filter((e) => e?.source === where.source && (e.cluster === undefined || e.cluster === c.name));
}

/** What the hub did with `c`, from its /status document. */
export function observe(c: CorpusCase, where: CaseSource, status: any): { observed: Observed; line?: string } {
  const entry = status?.clusters?.[c.name];
  const own = ownErrors(c, where, status);
  if (entry && entry.provider === c.provider && own.length === 0) {
    if (entry.state === "watching") return { observed: "served" };
    if (typeof entry.lastError === "string" && entry.lastError !== "" && ENGAGED_FAILING.has(entry.state)) {
      return { observed: "failing", line: entry.lastError };
    }
    if (entry.state !== "registering") return { observed: "pending" };
  }
  if (own.length > 0) return { observed: "refused", line: own.map((e) => e.error).join(" | ") };
  if (entry?.state === "registering" && entry.lastError) return { observed: "refused", line: entry.lastError };
  return { observed: "ignored" };
}

/** What the real clusters looked like before the corpus, and what they hold. */
export interface Baseline {
  /** How many Uuids each real cluster holds in the test namespace. */
  uuids: Readonly<Record<Target, number>>;
  /** `registeredAt` of each command-line cluster before the corpus was fed (a takeover re-registers it). */
  registeredAt: Readonly<Record<string, string>>;
}

/**
 * Judges `c` against its expectation. A served case must have cached exactly its target's Uuids (it serves the right
 * cluster, and all of it); a case that takes a reserved name must leave the command line's cluster as it was:
 * watching, registered at the same time, caching that cluster's own Uuids.
 */
export function judge(c: CorpusCase, where: CaseSource, status: any, baseline: Baseline): Verdict {
  const { observed, line } = observe(c, where, status);
  const e = c.expect;
  const verdict = (problem?: string): Verdict => ({ observed, line, problem });
  if (e.reserved !== undefined) {
    const real = status?.clusters?.[e.reserved];
    if (e.reserved === "in-cluster") {
      if (real?.provider === c.provider && real?.state !== "registering") {
        return verdict(`a ${c.provider} took the reserved name "in-cluster" (state ${real?.state})`);
      }
    } else if (
      real?.state !== "watching" || real?.registeredAt !== baseline.registeredAt[e.reserved] ||
      real?.objects !== baseline.uuids[e.reserved as Target]
    ) {
      return verdict(
        `the command line's cluster "${e.reserved}" is no longer served as it was (state ${real?.state}, registered ${real?.registeredAt} vs ${
          baseline.registeredAt[e.reserved]
        }, ${real?.objects} objects)`,
      );
    }
  }
  switch (observed) {
    case "served": {
      if (!e.served || e.reserved !== undefined) return verdict("served, but it had to be refused");
      const objects = status.clusters[c.name].objects;
      if (objects !== baseline.uuids[e.served]) {
        return verdict(
          `served with ${objects} objects cached; ${e.served} holds ${baseline.uuids[e.served]} Uuids there`,
        );
      }
      return verdict();
    }
    case "failing":
      return e.failing ? lineProblem(c, where, line!, "error", verdict) : verdict(
        e.mustRefuse ? "engaged, but it had to be refused unengaged" : "engaged, but its server does not serve it",
      );
    case "refused":
      if (e.refused.length === 0) return verdict("refused, but it had to be served");
      return lineProblem(c, where, line!, "refusal", verdict);
    case "ignored":
      return e.ignored ? verdict() : verdict("neither served nor refused: no /status entry, no provider error");
    case "pending":
      return verdict("still connecting or syncing, with no error shown");
  }
}

function lineProblem(
  c: CorpusCase,
  where: CaseSource,
  line: string,
  kind: "refusal" | "error",
  verdict: (problem?: string) => Verdict,
): Verdict {
  if (line.includes("\n")) return verdict(`its ${kind} is not one line`);
  const leaked = c.secrets.find((s) => line.includes(s));
  if (leaked !== undefined) {
    return verdict(`its ${kind} quotes a credential of the kubeconfig (${leaked.slice(0, 10)}…)`);
  }
  if (kind === "error") return verdict();
  // A case refused as a whole (a YAML alias: issue 37) is refused before its names are looked at, a reserved one too.
  const whole = c.expect.refused.filter((r) => r === "alias" || r === "limits");
  const reasons = c.expect.reserved !== undefined ? ["reserved" as const, ...whole] : c.expect.refused;
  if (!reasons.some((r) => REASON_PATTERNS[r].test(line))) {
    return verdict(`its refusal gives none of the reasons ${reasons.join(", ")}: ${short(line)}`);
  }
  if (!line.includes(where.source) && !line.includes(c.name)) {
    return verdict(`its refusal names neither ${where.source} nor "${short(c.name)}": ${short(line)}`);
  }
  return verdict();
}

function short(s: string): string {
  return s.length > 160 ? `${s.slice(0, 157)}...` : s;
}
