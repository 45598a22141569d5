// One rules review per namespaced cluster for the first pre-flight of all its operators, instead of one each.

import type { ResourceRule } from "../../kube/mod.ts";

/**
 * The namespace's rules, asked once for the operators' first pre-flight attempts in one cluster.
 *
 * Guarantees: the first attempts of the `operators` operators share one request (the first to ask sends it, the
 * others await it, failure included); once each of them ended its first attempt the answer is dropped, so a retry
 * (after `forbidden` or a failure) always asks again and sees RBAC as it is then; nothing is kept once the cluster
 * passed its pre-flight.
 */
export class FirstRulesReview {
  readonly #ask: (signal?: AbortSignal) => Promise<ResourceRule[]>;
  #firstAttemptsLeft: number;
  #rules: Promise<ResourceRule[]> | undefined;

  constructor(ask: (signal?: AbortSignal) => Promise<ResourceRule[]>, operators: number) {
    this.#ask = ask;
    this.#firstAttemptsLeft = operators;
  }

  /** The rules for an operator's attempt: shared on its first attempt, asked afresh on a retry. */
  rules(firstAttempt: boolean, signal?: AbortSignal): Promise<ResourceRule[]> {
    if (!firstAttempt || this.#firstAttemptsLeft <= 0) return this.#ask(signal);
    return this.#rules ??= this.#ask(signal);
  }

  /** An operator's first attempt ended (passed, forbidden or failed). */
  firstAttemptEnded(): void {
    if (--this.#firstAttemptsLeft <= 0) this.#rules = undefined;
  }
}
