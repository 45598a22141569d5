// What a caller sees when a request fails: whatever the transport, the timer or an abort threw, as one of the client's errors.

import { BodyLimitError } from "./_body_limit.ts";
import type { Call } from "./_call.ts";
import { NdjsonError } from "./_ndjson.ts";
import type { ClusterAccess } from "../config/cluster_access.ts";
import { ApiError, AuthError, TooLargeError, TransportError } from "../errors.ts";

/**
 * Turns whatever a request (`method` `path` on `access`) threw into the error its caller sees.
 *
 * Guarantees: ApiError, AuthError and TransportError pass through unchanged; an abort by the caller's own signal gives
 * the caller's reason; a close, a timeout or a deadline gives a TransportError saying so (`timeout` set for the
 * latter two); a malformed watch stream and anything else (socket and TLS errors) give a TransportError naming the
 * server, with the innermost message of the cause chain. The original error is always the `cause`; no message carries
 * a header.
 */
export function requestFailure(
  err: unknown,
  call: Call,
  method: string,
  path: string,
  access: ClusterAccess,
): unknown {
  if (
    err instanceof ApiError || err instanceof AuthError || err instanceof TransportError || err instanceof TooLargeError
  ) return err;
  switch (call.why) {
    case "caller":
      return call.callerReason;
    case "closed":
      return new TransportError(
        `${method} ${path}: the client for cluster "${access.name}" was closed`,
        { cause: err },
      );
    case "timeout":
    case "deadline":
      return new TransportError(
        `${method} ${path}: no complete response from ${access.server} within ${call.armedMs} ms`,
        { cause: err, timeout: true },
      );
  }
  if (err instanceof BodyLimitError) {
    const seen = err.declaredBytes === undefined
      ? `more than ${err.limitBytes} bytes`
      : `${err.declaredBytes} bytes (Content-Length)`;
    return new TooLargeError(
      `${method} ${path}: refused a ${err.what} of ${seen} from ${access.server}: the limit is ${err.limitBytes} bytes (--max-object-bytes)`,
      err.limitBytes,
      err.declaredBytes,
      { cause: err },
    );
  }
  if (err instanceof NdjsonError) {
    return new TransportError(`${method} ${path}: malformed watch stream from ${access.server}`, {
      cause: err,
    });
  }
  return new TransportError(
    `${method} ${path}: cannot reach ${access.server}: ${innermostMessage(err)}`,
    { cause: err },
  );
}

/** The message of the innermost error with one, at most five causes deep. */
export function innermostMessage(err: unknown): string {
  let cur: unknown = err;
  let msg = err instanceof Error ? err.message : String(err);
  for (let i = 0; i < 5 && cur instanceof Error; i++) {
    if (cur.message) msg = cur.message;
    cur = cur.cause;
  }
  return msg;
}
