// The docs' link check: every relative link in README.md and docs/ (subfolders too) names a file that exists, and
// every #anchor names a heading of its target page under GitHub's slug rules. Pure: reads files, fetches nothing
// (http(s) links are not checked), needs no cluster.
//
// Guarantees: links and headings inside fenced code blocks and inline code are ignored, as GitHub renders them as
// text; an anchor is checked only against Markdown targets (an anchor into a .ts or .yaml file is reported).

import assert from "node:assert/strict";

const ROOT = new URL("..", import.meta.url);

/** One link found in a Markdown page. */
interface Link {
  /** The page it is in, relative to the repository root. */
  page: string;
  line: number;
  target: string;
}

/** The page's text with fenced code blocks and inline code blanked out (line numbers kept). */
function proseOf(markdown: string): string {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of markdown.split("\n")) {
    const open = line.match(/^\s*(`{3,}|~{3,})/);
    if (fence === null && open) {
      fence = open[1][0];
      out.push("");
    } else if (fence !== null) {
      if (open && open[1][0] === fence) fence = null;
      out.push("");
    } else {
      out.push(line.replace(/(`+)[^`]*?\1/g, ""));
    }
  }
  return out.join("\n");
}

/** GitHub's anchor for a heading's text: formatting dropped, lowercase, punctuation removed, spaces to hyphens. */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // links and images keep their text
    .replace(/`/g, "")
    .replace(/<[^>]+>/g, "")
    .replace(/\*+/g, "")
    .replace(/(^|\s)_+|_+(\s|$)/g, "$1$2") // _emphasis_, not snake_case
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, "").replace(/ /g, "-");
}

/** Every anchor a page offers: its headings' slugs, repeats numbered -1, -2, … as GitHub does. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | null = null;
  for (const line of markdown.split("\n")) {
    const open = line.match(/^\s*(`{3,}|~{3,})/);
    if (fence === null && open) {
      fence = open[1][0];
      continue;
    }
    if (fence !== null) {
      if (open && open[1][0] === fence) fence = null;
      continue;
    }
    const heading = line.match(/^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/);
    if (!heading) continue;
    const base = githubSlug(heading[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Every inline link and image of a page, outside code. */
export function linksOf(page: string, markdown: string): Link[] {
  const links: Link[] = [];
  proseOf(markdown).split("\n").forEach((text, i) => {
    for (const m of text.matchAll(/!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ page, line: i + 1, target: m[1] });
    }
  });
  return links;
}

/** What is wrong with one link, or null; `read` returns a file's text, `exists` whether a path exists. */
export function problemOf(
  link: Link,
  read: (path: string) => string | null,
  exists: (path: string) => boolean,
): string | null {
  const { target } = link;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // http(s), mailto: not fetched
  const hash = target.indexOf("#");
  const pathPart = hash === -1 ? target : target.slice(0, hash);
  const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
  const file = pathPart === "" ? link.page : joinPath(dirOf(link.page), decodeURIComponent(pathPart));
  if (file.startsWith("../")) return `${link.page}:${link.line}: ${target} leaves the repository`;
  if (!exists(file)) return `${link.page}:${link.line}: ${target}: no file ${file}`;
  if (anchor === null) return null;
  if (!file.endsWith(".md")) return `${link.page}:${link.line}: ${target}: an anchor into ${file}, not a Markdown page`;
  const text = read(file);
  if (text === null) return `${link.page}:${link.line}: ${target}: ${file} cannot be read`;
  if (!anchorsOf(text).has(anchor)) return `${link.page}:${link.line}: ${target}: no heading #${anchor} in ${file}`;
  return null;
}

function dirOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i === -1 ? "" : path.slice(0, i);
}

function joinPath(dir: string, rel: string): string {
  const parts = dir === "" ? [] : dir.split("/");
  for (const part of rel.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0 || parts[parts.length - 1] === "..") parts.push("..");
      else parts.pop();
    } else parts.push(part);
  }
  return parts.join("/");
}

function readRepo(path: string): string | null {
  try {
    return Deno.readTextFileSync(new URL(path, ROOT));
  } catch {
    return null;
  }
}

function existsInRepo(path: string): boolean {
  try {
    Deno.statSync(new URL(path === "" ? "." : path, ROOT));
    return true;
  } catch {
    return false;
  }
}

/** README.md and every .md page under docs/ (its subfolders included), relative to the repository root. */
function pages(): string[] {
  const docs: string[] = [];
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(new URL(`${dir}/`, ROOT))) {
      if (e.isDirectory) walk(`${dir}/${e.name}`);
      else if (e.isFile && e.name.endsWith(".md")) docs.push(`${dir}/${e.name}`);
    }
  };
  walk("docs");
  return ["README.md", ...docs.sort()];
}

function allLinks(): Link[] {
  return pages().flatMap((page) => linksOf(page, readRepo(page) ?? ""));
}

Deno.test("every relative link in README.md and docs/ names a file that exists", () => {
  const problems = allLinks()
    .map((l) => ({ ...l, target: l.target.split("#")[0] }))
    .filter((l) => l.target !== "")
    .map((l) => problemOf(l, readRepo, existsInRepo))
    .filter((p) => p !== null);
  assert.deepEqual(problems, []);
});

Deno.test("every #anchor in README.md and docs/ names a heading of its target page", () => {
  const problems = allLinks()
    .filter((l) => l.target.includes("#") && !/^[a-z][a-z0-9+.-]*:/i.test(l.target))
    .map((l) => problemOf(l, readRepo, existsInRepo))
    .filter((p) => p !== null);
  assert.deepEqual(problems, []);
});

Deno.test("every page directly in docs/ is linked from README.md", () => {
  const linked = new Set(
    linksOf("README.md", readRepo("README.md") ?? "").map((l) => joinPath("", l.target.split("#")[0])),
  );
  const unlinked = pages().filter((p) => /^docs\/[^/]+$/.test(p) && !linked.has(p));
  assert.deepEqual(unlinked, []);
});

Deno.test("every page in a subfolder of docs/ is reached from README.md by following links", () => {
  const reached = new Set(["README.md"]);
  const queue = ["README.md"];
  while (queue.length > 0) {
    const page = queue.shift()!;
    for (const l of linksOf(page, readRepo(page) ?? "")) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(l.target)) continue;
      const file = joinPath(dirOf(page), l.target.split("#")[0]);
      if (file.endsWith(".md") && !reached.has(file)) {
        reached.add(file);
        queue.push(file);
      }
    }
  }
  assert.deepEqual(pages().filter((p) => !reached.has(p)), []);
});

Deno.test("the link check reports a missing file, a missing heading and an anchor into a non-Markdown file", () => {
  const files: Record<string, string> = {
    "README.md": "# Front door\n\n## Two commands\n",
    "docs/a.md": "# A page\n\n## The wire\n\n## The wire\n",
    "src/x.ts": "",
  };
  const read = (p: string) => files[p] ?? null;
  const exists = (p: string) => p in files || p === "docs" || p === "src";
  const page = [
    "[ok](../README.md#two-commands) [ok](#the-wire-1) [ok](a.md) [web](https://example.com/#x)",
    "[missing](nothing.md) [no heading](../README.md#three-commands) [code](../src/x.ts#L3)",
    "`[in code](gone.md)`",
    "```",
    "[in a fence](gone.md)",
    "```",
  ].join("\n");
  const problems = linksOf("docs/a.md", page).map((l) => problemOf(l, read, exists)).filter((p) => p !== null);
  assert.deepEqual(problems, [
    "docs/a.md:2: nothing.md: no file docs/nothing.md",
    "docs/a.md:2: ../README.md#three-commands: no heading #three-commands in README.md",
    "docs/a.md:2: ../src/x.ts#L3: an anchor into src/x.ts, not a Markdown page",
  ]);
});

Deno.test("githubSlug() follows GitHub's rules: formatting and punctuation dropped, lowercase, spaces to hyphens", () => {
  assert.equal(githubSlug("Two commands, on a fresh machine"), "two-commands-on-a-fresh-machine");
  assert.equal(githubSlug("`deno task cluster:add` and `cluster:remove`"), "deno-task-clusteradd-and-clusterremove");
  assert.equal(
    githubSlug("Sharding: replicas share the clusters (`--shard`)"),
    "sharding-replicas-share-the-clusters---shard",
  );
  assert.equal(githubSlug("Production: a compiled binary in a pod"), "production-a-compiled-binary-in-a-pod");
  assert.equal(githubSlug("**Bold** and [a link](x.md)"), "bold-and-a-link");
  assert.equal(githubSlug("`rss_mib_per_idle_cluster` per cluster"), "rss_mib_per_idle_cluster-per-cluster");
  assert.deepEqual([...anchorsOf("# A\n## B\n## B\n```\n# C\n```\n")], ["a", "b", "b-1"]);
});
