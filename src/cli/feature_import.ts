// Optional features' modules, imported on first use: what the flags do not ask for is never loaded.

import { errorText } from "../util/mod.ts";

/** A feature's module could not be loaded (a broken installation or a compiled binary missing it). */
export class FeatureLoadError extends Error {
  override name = "FeatureLoadError";
}

/**
 * Runs `load` (a dynamic `import()` with a string-literal specifier, so `deno compile` still bundles the module) and
 * returns its module.
 *
 * Guarantees: a module that cannot be loaded throws FeatureLoadError, one line naming the feature (the flag that asks
 * for it) and why; the module's own errors at import are in `cause`.
 */
export async function loadFeature<T>(feature: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    throw new FeatureLoadError(`cannot load the module of ${feature}: ${errorText(err)}`, { cause: err });
  }
}
