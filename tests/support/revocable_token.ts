// ServiceAccount tokens a test can revoke one by one (each bound to its own Secret), and the wait for a revocation.
//
// Guarantees: `waitTokenRejected` returns only once the apiserver answered 401 to the token, so a request made with
// it afterwards fails too (the apiserver caches a token's successful authentication for up to 10 s: a request
// right after the revocation may still pass, which is why a test must wait for this before it counts on it).

import { kubectlOk } from "../../dev/support/kubectl.ts";

/** A TokenRequest token bound to a Secret of its own: deleting the Secret revokes this token and no other. */
export interface RevocableToken {
  token: string;
  /** The Secret the token is bound to. */
  anchor: string;
}

/** The revoked token was still accepted when the hang guard ran out. */
export class TokenStillValidError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "TokenStillValidError";
  }
}

/**
 * Mints a one-hour token of ServiceAccount `serviceAccount` in `context`/`namespace`, bound to a new Opaque Secret
 * there (`kubectl create token --bound-object-kind Secret`); {@linkcode revokeToken} deletes that Secret.
 */
export async function mintRevocableToken(
  context: string,
  namespace: string,
  serviceAccount: string,
): Promise<RevocableToken> {
  const anchor = `${serviceAccount}-anchor-${crypto.randomUUID().slice(0, 8)}`;
  await kubectlOk(context, ["create", "secret", "generic", anchor, "-n", namespace]);
  const token = (await kubectlOk(context, [
    "create",
    "token",
    serviceAccount,
    "-n",
    namespace,
    "--duration=1h",
    "--bound-object-kind=Secret",
    `--bound-object-name=${anchor}`,
  ])).trim();
  return { token, anchor };
}

/** Deletes the token's Secret in `context`/`namespace`, then waits until the apiserver at `server` refuses it. */
export async function revokeToken(
  context: string,
  namespace: string,
  revocable: RevocableToken,
  server: { url: string; caPem: string },
  hangGuardMs = 60_000,
): Promise<void> {
  await kubectlOk(context, ["delete", "secret", revocable.anchor, "-n", namespace, "--wait=true"]);
  await waitTokenRejected(server.url, server.caPem, revocable.token, hangGuardMs);
}

/**
 * Polls `GET /api` at `serverUrl` with `token` until the answer is 401; any other answer after `hangGuardMs`
 * throws a {@linkcode TokenStillValidError} with the last status (never the token).
 */
export async function waitTokenRejected(
  serverUrl: string,
  caPem: string,
  token: string,
  hangGuardMs = 60_000,
): Promise<void> {
  const client = Deno.createHttpClient({ caCerts: [caPem] });
  const deadline = Date.now() + hangGuardMs;
  let last = "no answer yet";
  try {
    while (Date.now() < deadline) {
      try {
        const res = await fetch(`${serverUrl}/api`, {
          client,
          headers: { authorization: `Bearer ${token}` },
          signal: AbortSignal.timeout(10_000),
        });
        await res.body?.cancel();
        if (res.status === 401) return;
        last = `HTTP ${res.status}`;
      } catch (err) {
        last = String((err as Error)?.message ?? err);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    client.close();
  }
  throw new TokenStillValidError(
    `the revoked token was still not refused by ${serverUrl} after ${hangGuardMs} ms (last answer: ${last})`,
  );
}
