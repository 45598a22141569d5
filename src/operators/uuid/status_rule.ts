// The Uuid operator's one rule: what a Uuid's status should become, decided from the object alone.

import { validate } from "uuid";

/** The status fields this operator owns (the seed's three, plus modern additions). */
export interface UuidStatus {
  uuid?: unknown;
  state?: unknown;
  message?: unknown;
  observedGeneration?: unknown;
}

/** What to write, if anything. */
export type Decision =
  | { action: "none" }
  | { action: "generate" }
  | { action: "mark-ok"; uuid: string }
  | { action: "mark-error"; message: string };

export const OK_MESSAGE = "UUID assigned by operator-hub";

/**
 * Decides from the current status alone (level-based).
 *
 * The rule for values somebody else put there:
 * - no `status.uuid` (absent, null or "") → generate one and set state Ok;
 * - a `status.uuid` that is not a UUID string (a number, "not-a-uuid") → state Error with a message
 *   naming the value, and the value is left untouched, because somebody put it there;
 * - a valid UUID with a state other than Ok (missing, unknown or a stale Error) → state Ok, same UUID.
 * A valid UUID is never replaced.
 */
export function decide(current: unknown): Decision {
  const status = current as UuidStatus | undefined;
  const uuid = status?.uuid;
  if (uuid === undefined || uuid === null || uuid === "") return { action: "generate" };
  if (typeof uuid !== "string" || !validate(uuid)) {
    const message = invalidMessage(uuid);
    if (status?.state === "Error" && status?.message === message) return { action: "none" };
    return { action: "mark-error", message };
  }
  if (status?.state === "Ok") return { action: "none" };
  return { action: "mark-ok", uuid };
}

function invalidMessage(value: unknown): string {
  let shown = JSON.stringify(value) ?? String(value);
  if (shown.length > 80) shown = shown.slice(0, 77) + "...";
  return `status.uuid is not a valid UUID (found ${typeof value} ${shown}); it is left untouched: ` +
    `remove status.uuid to have a new one generated`;
}

/**
 * The status a decision writes, for the object's `generation`: a new UUID with state Ok, state Ok alone, or
 * state Error with the message.
 */
export function statusFor(
  d: Exclude<Decision, { action: "none" }>,
  newUuid: () => string,
  observedGeneration?: number,
): Record<string, unknown> {
  if (d.action === "mark-error") return { state: "Error", message: d.message, observedGeneration };
  return {
    ...(d.action === "generate" ? { uuid: newUuid() } : {}),
    state: "Ok",
    message: OK_MESSAGE,
    observedGeneration,
  };
}
