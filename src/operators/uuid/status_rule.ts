// The Uuid operator's one rule: what a Uuid's status should become, decided from the object alone.

/**
 * A UUID in its canonical 8-4-4-4-12 form, versions 1 to 8, the nil and the max UUID: what the `uuid` package's
 * `validate` accepts (RFC 9562), any letter case. Written out here so the hub loads no npm package for it.
 */
const UUID_PATTERN =
  /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$/i;

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
  if (typeof uuid !== "string" || !UUID_PATTERN.test(uuid)) {
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
