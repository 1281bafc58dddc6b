import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/**
 * The repository is self-contained: a clone has everything its documents and comments point at. No
 * file may name a path outside the repository (a sibling folder of the checkout, an absolute path on
 * some machine), and every relative markdown link must land on a file of the repository. The contract
 * the code cites as "CONTRACT §N" is docs/CONTRACT.md.
 */
const ROOT = path.resolve(__dirname, "..");

const TEXT_EXTENSIONS = new Set([
  ".md",
  ".ts",
  ".tsx",
  ".js",
  ".mjs",
  ".cjs",
  ".json",
  ".sh",
  ".graphql",
  ".prisma",
  ".sql",
  ".toml",
]);
const TEXT_FILES = new Set([".ci/run", "package.json"]);
const CODE_EXTENSIONS = new Set([".ts", ".tsx", ".js", ".mjs", ".cjs"]);
/** How a module specifier or a bare path may be completed to name a file. */
const COMPLETIONS = ["", ".ts", ".tsx", ".js", ".json", ".md", "/index.ts", "/index.js"];

function scanned(file: string): boolean {
  if (file === "package-lock.json" || /^prisma\/data\/[^/]+\.json$/.test(file)) return false;
  return TEXT_FILES.has(file) || TEXT_EXTENSIONS.has(path.extname(file));
}

/** Folders a walk skips when git cannot list the files: the fixed three and .gitignore's plain folder names. */
function ignoredFolders(): Set<string> {
  const ignored = new Set(["node_modules", "dist", ".git"]);
  const gitignore = path.join(ROOT, ".gitignore");
  if (existsSync(gitignore)) {
    for (const line of readFileSync(gitignore, "utf8").split("\n")) {
      const entry = line.trim().replace(/^\//, "").replace(/\/$/, "");
      if (entry !== "" && !entry.startsWith("#") && !/[*?[\]!]/.test(entry)) ignored.add(entry);
    }
  }
  return ignored;
}

function walk(): string[] {
  const ignored = ignoredFolders();
  const files: string[] = [];
  const visit = (dir: string) => {
    for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = dir === "" ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!ignored.has(entry.name) && !ignored.has(rel)) visit(rel);
      } else if (entry.isFile()) files.push(rel);
    }
  };
  visit("");
  return files;
}

/** The repository's files: what git tracks, plus new files it does not ignore; a walk without git. */
function repositoryFiles(): { files: string[]; source: "git" | "walk" } {
  let files: string[];
  let source: "git" | "walk" = "git";
  try {
    const out = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      maxBuffer: 64 * 1024 * 1024,
    });
    files = out.split("\0").filter((f) => f !== "");
  } catch {
    files = walk();
    source = "walk";
  }
  // A file deleted in the working tree is still in git's index until the deletion is staged.
  const present = [...new Set(files)].filter(
    (f) => existsSync(path.join(ROOT, f)) && statSync(path.join(ROOT, f)).isFile(),
  );
  return { files: present.sort(), source };
}

interface Finding {
  file: string;
  line: number;
  reference: string;
  reason: string;
}

const insideRoot = (absolute: string) => absolute === ROOT || absolute.startsWith(ROOT + path.sep);

function namesAFile(absolute: string): boolean {
  const candidates = COMPLETIONS.map((c) => absolute + c);
  // TypeScript sources import their siblings as "./x.js".
  if (absolute.endsWith(".js")) candidates.push(absolute.slice(0, -3) + ".ts", absolute.slice(0, -3) + ".tsx");
  return candidates.some((c) => existsSync(c));
}

/** Why a relative reference from `dir` is not a path of the repository, or null when it is one. */
function judgeRelative(dir: string, target: string): string | null {
  const absolute = target.startsWith("/") ? path.join(ROOT, target) : path.resolve(dir, target);
  if (!insideRoot(absolute)) return "resolves outside the repository";
  if (!namesAFile(absolute)) return "names no file of the repository";
  return null;
}

// Built from parts so that this file does not name the paths it looks for.
const UP = "..";
const ABSOLUTE_MACHINE_PATH = new RegExp(`(?<![\\w.~-])/${"wo"}rk/[\\w.-]*`, "g");
const SIBLING_SHARED = new RegExp(`(?<![\\w./-])((?:\\.\\./)+${"sha"}red(?:/[\\w.-]+)*)`, "g");
const PARENT_RELATIVE = /(?<![\w./-])((?:\.\.\/)+[\w.-]+(?:\/[\w.-]+)*)/g;
const MARKDOWN_LINK = /\]\(\s*<?([^()\s<>]+)>?(?:\s+"[^"]*")?\s*\)/g;
const MARKDOWN_REFERENCE = /^\s{0,3}\[[^\]]+\]:\s*<?([^\s<>]+)>?/g;
const MARKDOWN_MENTION = /(?<![\w./:@-])((?:\.{1,2}\/)*(?:[\w-]+\/)*[\w-]+\.md)(?![\w-])/g;
const MODULE_SPECIFIER = /(?:\bfrom\s+|\brequire\(\s*|\bimport\(\s*)["'](\.{1,2}\/[^"']+)["']/g;

/** Every reference in `text` (the content of `file`, relative to the root) that leaves the repository. */
function scanText(file: string, text: string): Finding[] {
  const dir = path.dirname(path.join(ROOT, file));
  const extension = path.extname(file);
  const markdown = extension === ".md";
  const code = CODE_EXTENSIONS.has(extension);
  const findings = new Map<string, Finding>();
  const add = (line: number, reference: string, reason: string | null) => {
    if (reason !== null) findings.set(`${line}\0${reference}`, { file, line, reference, reason });
  };

  text.split("\n").forEach((content, index) => {
    const line = index + 1;
    for (const m of content.matchAll(ABSOLUTE_MACHINE_PATH))
      add(line, m[0], "is an absolute path on a machine, not a path of the repository");
    if (content.includes(ROOT)) add(line, ROOT, "is this checkout's absolute path");
    for (const m of content.matchAll(SIBLING_SHARED)) add(line, m[1]!, judgeRelative(dir, m[1]!));
    for (const m of content.matchAll(MARKDOWN_MENTION)) {
      const mention = m[1]!;
      // A document named in prose or a comment: relative to the file, to the root, or one of docs/.
      const found = [dir, ROOT, path.join(ROOT, "docs")].some((base) => judgeRelative(base, mention) === null);
      add(line, mention, found ? null : judgeRelative(dir, mention));
    }
    if (markdown) {
      for (const m of content.matchAll(PARENT_RELATIVE)) add(line, m[1]!, judgeRelative(dir, m[1]!));
      for (const m of [...content.matchAll(MARKDOWN_LINK), ...content.matchAll(MARKDOWN_REFERENCE)]) {
        const target = m[1]!;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#")) continue; // a URL or an anchor on this page
        const filePart = decodeURIComponent(target.replace(/[?#].*$/, ""));
        if (filePart !== "") add(line, target, judgeRelative(dir, filePart));
      }
    }
    if (code) {
      for (const m of content.matchAll(MODULE_SPECIFIER)) {
        const absolute = path.resolve(dir, m[1]!);
        add(line, m[1]!, insideRoot(absolute) ? null : "imports from outside the repository");
      }
    }
  });
  return [...findings.values()];
}

const show = (f: Finding) => `${f.file}:${f.line}: ${f.reference} ${f.reason}`;

describe("the repository is self-contained", () => {
  const { files, source } = repositoryFiles();
  const texts = files.filter(scanned);

  it("scans every text file of the repository", () => {
    // Not vacuous: the sources, tests, scripts, pages and documents are all there.
    expect(texts.length).toBeGreaterThan(50);
    for (const expected of [
      "README.md",
      "docs/API.md",
      "docs/CONTRACT.md",
      "package.json",
      "src/app.ts",
      "web/shared/api-key.ts",
      ".ci/run",
    ]) {
      expect(texts).toContain(expected);
    }
    expect(texts).not.toContain("package-lock.json");
    expect(texts.some((f) => f.startsWith("node_modules/") || f.startsWith("dist/"))).toBe(false);
    if (source === "walk") console.warn("[self-contained] git could not list the files; walked the tree instead");
  });

  it("has no file that references a path outside the repository", () => {
    const findings = texts.flatMap((file) => scanText(file, readFileSync(path.join(ROOT, file), "utf8")));
    expect(findings.map(show)).toEqual([]);
  });

  it("carries the contract the code cites: every CONTRACT §N is a section of docs/CONTRACT.md", () => {
    const contract = readFileSync(path.join(ROOT, "docs", "CONTRACT.md"), "utf8");
    const sections = new Set([...contract.matchAll(/^## (\d+)\. /gm)].map((m) => Number(m[1])));
    const cited: string[] = [];
    for (const file of texts) {
      if (file === "docs/CONTRACT.md") continue;
      readFileSync(path.join(ROOT, file), "utf8")
        .split("\n")
        .forEach((content, index) => {
          for (const m of content.matchAll(/CONTRACT\s+((?:§\s?\d+(?:\s*(?:,|and|&)\s*)?)+)/g)) {
            for (const n of m[1]!.matchAll(/\d+/g)) cited.push(`${file}:${index + 1}: §${n[0]}`);
          }
        });
    }
    expect(cited.length).toBeGreaterThan(10);
    expect(cited.filter((c) => !sections.has(Number(/§(\d+)$/.exec(c)![1])))).toEqual([]);
  });

  describe("the check itself", () => {
    const sibling = [UP, "sha" + "red", "CONTRACT.md"].join("/");

    it("finds a document named in a sibling folder of the checkout", () => {
      expect(
        scanText("README.md", `Environment variables (\`${sibling}\` §9 is the source):`).map((f) => f.reason),
      ).toContain("resolves outside the repository");
      expect(scanText("docs/API.md", `\`${sibling}\` is the contract.`)).not.toEqual([]);
      expect(scanText("src/db/database.ts", `// see ${sibling} on pool size`)).not.toEqual([]);
    });

    it("finds absolute machine paths, documents the repository lacks, and links that leave it", () => {
      expect(scanText("src/config.ts", `// ${"/wo" + "rk/"}${"sha" + "red"}/STYLE.md`)).not.toEqual([]);
      expect(scanText("src/db/database.ts", `// see ${"TOOL" + "CHAIN"}.md on pool size`).map((f) => f.reason)).toEqual(
        ["names no file of the repository"],
      );
      expect(scanText("docs/API.md", `[notes](${UP}/${UP}/elsewhere/NOTES.md)`)).not.toEqual([]);
      const missing = ["MISSING", "md"].join(".");
      expect(scanText("docs/API.md", `[missing](${missing})`)).not.toEqual([]);
      expect(
        scanText("web/ide/fetcher.ts", `import { x } from "${UP}/${UP}/${UP}/outside";`).map((f) => f.reason),
      ).toEqual(["imports from outside the repository"]);
    });

    it("accepts references that stay inside", () => {
      expect(
        scanText(
          "docs/API.md",
          "[CONTRACT.md](CONTRACT.md), [the README](../README.md#configuration), [top](#errors), see RELIABILITY.md and docs/SECURITY.md",
        ),
      ).toEqual([]);
      expect(
        scanText(
          "README.md",
          "[docs/API.md](docs/API.md#graphql-limits) and [BENCHMARKS.md](BENCHMARKS.md), https://example.com/x/README.md",
        ),
      ).toEqual([]);
      // web/shared is a folder of the repository: its importers stay inside.
      expect(
        scanText("web/ide/fetcher.ts", `import { graphqlWebsocketUrl } from "${UP}/${"sha" + "red"}/gateway-url";`),
      ).toEqual([]);
      expect(scanText("src/errors.ts", "/** documented in docs/API.md (CONTRACT §3) */")).toEqual([]);
    });
  });
});
