// The RSA key that signs and verifies service-account tokens, written once per set of clusters (the test kit's).

import { SERVICE_ACCOUNT_KEY } from "./_layout.ts";
import { ensureServiceAccountKey as ensureKey } from "../../src/testing/control_plane.ts";

/** Writes an RSA-2048 PKCS#8 key for signing and verifying service-account tokens, unless one exists. */
export function ensureServiceAccountKey(): Promise<void> {
  return ensureKey(SERVICE_ACCOUNT_KEY);
}
