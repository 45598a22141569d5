// The RSA key that signs and verifies service-account tokens, written once per set of clusters.

import { SERVICE_ACCOUNT_KEY } from "./_layout.ts";
import { writeFileAtomic } from "./_state.ts";

/** Writes an RSA-2048 PKCS#8 key for signing and verifying service-account tokens, unless one exists. */
export async function ensureServiceAccountKey(): Promise<void> {
  try {
    await Deno.stat(SERVICE_ACCOUNT_KEY);
    return;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const pair = await crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  );
  const der = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  const base64 = btoa(String.fromCharCode(...der)).replace(/.{64}/g, "$&\n").trimEnd();
  await writeFileAtomic(SERVICE_ACCOUNT_KEY, `-----BEGIN PRIVATE KEY-----\n${base64}\n-----END PRIVATE KEY-----\n`);
}
