// The module specifiers one TypeScript source imports, read from its text: static and type-only imports, re-exports,
// side-effect imports and dynamic `import("...")` with a string literal.

/** One specifier a module names, and whether it is a dynamic `import(...)`. */
export interface ImportSpecifier {
  specifier: string;
  dynamic: boolean;
}

type Token = { kind: "string"; value: string } | { kind: "word"; value: string } | { kind: "punct"; value: string };

const WORD = /[A-Za-z0-9_$]/;
/** After these, a `/` starts a regular expression literal, not a division. */
const REGEX_AFTER_PUNCT = new Set(["(", ",", "=", ":", "[", "!", "&", "|", "?", "{", "}", ";", "+", "-", "*", "%"]);
const REGEX_AFTER_WORD = new Set(["return", "typeof", "case", "do", "else", "in", "of", "void", "yield", "await"]);

/**
 * The tokens of `text` that matter to imports: words, punctuation and string literals (with their value); comments,
 * template literal text and regular expression literals are skipped, so an `import` inside them is not one.
 *
 * Assumptions: the source parses; `/` starts a regular expression after punctuation or a keyword that cannot end an
 * expression (the usual lexer heuristic), which holds for this repository's code.
 */
export function tokens(text: string): Token[] {
  const out: Token[] = [];
  const braces: number[] = []; // for each open template `${`, the brace depth at which it closes
  let depth = 0;
  let i = 0;
  const n = text.length;
  const regexAllowed = () => {
    const last = out[out.length - 1];
    if (!last) return true;
    if (last.kind === "punct") return REGEX_AFTER_PUNCT.has(last.value);
    if (last.kind === "word") return REGEX_AFTER_WORD.has(last.value);
    return false;
  };
  const template = () => {
    // at the character after "`" or after the "}" closing a substitution: read to "`" or "${"
    while (i < n) {
      const c = text[i];
      if (c === "\\") i += 2;
      else if (c === "`") {
        i++;
        out.push({ kind: "string", value: "" });
        return;
      } else if (c === "$" && text[i + 1] === "{") {
        i += 2;
        braces.push(depth);
        depth++;
        out.push({ kind: "punct", value: "(" });
        return;
      } else i++;
    }
  };
  while (i < n) {
    const c = text[i];
    if (c === " " || c === "\n" || c === "\t" || c === "\r") i++;
    else if (c === "/" && text[i + 1] === "/") {
      while (i < n && text[i] !== "\n") i++;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      let value = "";
      while (j < n && text[j] !== c && text[j] !== "\n") {
        if (text[j] === "\\") {
          value += text[j + 1] ?? "";
          j += 2;
        } else value += text[j++];
      }
      out.push({ kind: "string", value });
      i = j + 1;
    } else if (c === "`") {
      i++;
      template();
    } else if (c === "/" && regexAllowed()) {
      let j = i + 1;
      let inClass = false;
      while (j < n && text[j] !== "\n") {
        const d = text[j];
        if (d === "\\") j++;
        else if (d === "[") inClass = true;
        else if (d === "]") inClass = false;
        else if (d === "/" && !inClass) break;
        j++;
      }
      j++;
      while (j < n && WORD.test(text[j])) j++;
      out.push({ kind: "string", value: "" });
      i = j;
    } else if (WORD.test(c)) {
      let j = i;
      while (j < n && WORD.test(text[j])) j++;
      out.push({ kind: "word", value: text.slice(i, j) });
      i = j;
    } else {
      if (c === "{") depth++;
      if (c === "}") {
        depth--;
        if (braces.length > 0 && braces[braces.length - 1] === depth) {
          braces.pop();
          i++;
          out.push({ kind: "punct", value: ")" });
          template();
          continue;
        }
      }
      out.push({ kind: "punct", value: c });
      i++;
    }
  }
  return out;
}

/** Tokens allowed between `import`/`export` and `from`: names, `type`, `as`, `*`, braces and commas. */
function clauseToken(t: Token): boolean {
  if (t.kind === "word") return t.value !== "from";
  return t.kind === "punct" && (t.value === "{" || t.value === "}" || t.value === "," || t.value === "*");
}

/**
 * Every specifier `text` imports, in order: `import ... from "x"`, `import type ... from "x"`, `import "x"`,
 * `export ... from "x"`, `export type ... from "x"`, and `import("x")` (dynamic, string literal only). `import.meta`,
 * `import(variable)` and the word `import` in comments, strings and templates are not imports.
 */
export function importSpecifiers(text: string): ImportSpecifier[] {
  const ts = tokens(text);
  const found: ImportSpecifier[] = [];
  for (let k = 0; k < ts.length; k++) {
    const t = ts[k];
    if (t.kind !== "word" || (t.value !== "import" && t.value !== "export")) continue;
    const prev = ts[k - 1];
    if (prev?.kind === "punct" && prev.value === ".") continue; // a property named import/export
    const next = ts[k + 1];
    if (!next) continue;
    if (t.value === "import" && next.kind === "punct" && next.value === "(") {
      const arg = ts[k + 2];
      const close = ts[k + 3];
      if (arg?.kind === "string" && close?.kind === "punct" && (close.value === ")" || close.value === ",")) {
        if (arg.value !== "") found.push({ specifier: arg.value, dynamic: true });
      }
      continue;
    }
    if (t.value === "import" && next.kind === "string") {
      found.push({ specifier: next.value, dynamic: false });
      continue;
    }
    if (t.value === "export" && !(next.kind === "punct" && (next.value === "{" || next.value === "*"))) {
      if (!(next.kind === "word" && next.value === "type" && ts[k + 2]?.value === "{")) continue;
    }
    let j = k + 1;
    while (j < ts.length && clauseToken(ts[j])) j++;
    const from = ts[j];
    const spec = ts[j + 1];
    if (from?.kind === "word" && from.value === "from" && spec?.kind === "string") {
      found.push({ specifier: spec.value, dynamic: false });
    }
  }
  return found;
}
