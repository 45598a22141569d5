// The built-in operators, by the name `--operators` selects them with. Adding one is one line here.

import type { Operator } from "../sdk/mod.ts";
import { uuidOperator } from "./uuid/mod.ts";

/** Each built-in operator's factory, by name. */
export const BUILT_IN_OPERATORS: Readonly<Record<string, () => Operator>> = {
  uuid: () => uuidOperator(),
};
