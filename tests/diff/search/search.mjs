// Differential test of `pisession search` against pi 1.6.0's /resume search.
//
//   node search.mjs --sm PATH/session-manager.js --pisession build/pisession
//                   --work DIR [--seed S] [--stores N] [--queries M] [-v]
//
// Writes N randomized stores (raw JSONL, so that the odd cases pi's reader
// meets can be written: session_info clears, text blocks, tool results and
// other roles whose text must not count, numbers and nulls as text, bad
// lines, CRLF and lone CR line ends, a last line without a line break,
// files that are no session, messages without timestamps, ties of the last
// activity time), loads them with pi's SessionManager.listAll(dir), and for
// M queries per store drawn from the stores' own text (tokens, substrings,
// phrases with odd white space, fuzzy subsequences, letters+digits swaps,
// re: patterns, invalid regexes, unbalanced quotes) compares pi's
// filterAndSortSessions(infos, q, "recent") with `pisession search`, given
// the files in the order pi read them.  The infos themselves (id, cwd,
// name, modified, messageCount, firstMessage, allMessagesText) are compared
// too, through `pisession search --json --text ""`.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync, rmSync, utimesSync, readdirSync, readlinkSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { mulberry32 } from "../mulberry32.mjs";

const args = process.argv.slice(2);
const opt = (name, def) => {
	const i = args.indexOf(name);
	return i >= 0 ? args[i + 1] : def;
};
const smPath = resolve(opt("--sm"));
const pisession = resolve(opt("--pisession"));
const work = resolve(opt("--work"));
const seed = Number(opt("--seed", "20261201"));
const nStores = Number(opt("--stores", "8"));
const nQueries = Number(opt("--queries", "60"));
const verbose = args.includes("-v");
// --mount MNT: the work directory is also mounted there (a store whose
// project folders are the stores): each query is asked of
// MNT/store<k>/search/QUERY/ too, which must list what pi lists.
const mount = opt("--mount") ? resolve(opt("--mount")) : null;

const { SessionManager } = await import(pathToFileURL(smPath).href);
const searchJs = join(dirname(smPath), "..", "modes", "interactive", "components", "session-selector-search.js");
const { filterAndSortSessions, parseSearchQuery } = await import(pathToFileURL(searchJs).href);

const rand = mulberry32(seed);
const int = (n) => Math.floor(rand() * n);
const pick = (a) => a[int(a.length)];
const chance = (p) => rand() < p;

const WORDS = [
	"deploy", "Deploy", "DATABASE", "migration", "refactor", "parser", "fuzzy", "search", "resume", "kernel",
	"fuse", "inode", "v2fix", "abc123", "123abc", "node22", "Straße", "STRASSE", "naïve", "Ünïcödé", "ΣΟΦΙΑ",
	"ΟΔΟΣ", "σοφία", "İstanbul", "ДОБРО", "добро", "Привет", "日本語", "テスト", "emoji😀", "😀", "café",
	"CAFÉ", "x.y", "a+b", "(paren)", "[bracket]", "back\\slash", "tab\tinside", "C:\\path", "foo_bar",
	"foo-bar", "ǅemal", "ΆΈΉ", "ΑΣ", "Ǆ", "K", "ẞig", "ﬁle", "ŉ", "ΐ",
];
const KNOWN_RE_DIFF = /[ßẞſKΩÅﬀ-ﬆ\u{10000}-\u{10FFFF}]/u;
const SPACES = [" ", " ", " ", "  ", "\t", "\n", "\u00a0", "\u3000", " \n ", "\u2028", "\r\n"];
const CWDS = [
	"/home/user/project", "/home/user/Web App", "/srv/ΣΟΦΙΑ/repo", "/tmp/deploy-v2", "/home/ユーザー/src",
	"/work/abc123", "C:\\Users\\Dev\\Code", "",
];
const NAMES = ["Fix the parser", "  Deploy v2  ", "ΟΔΟΣ ΣΟΦΙΑ", "Straße bauen", "", "   ", "Refactor\tsearch", "naïve café", "abc123 work", "İstanbul trip"];

function sentence(n) {
	let s = "";
	for (let i = 0; i < n; i++) s += (i ? pick(SPACES) : "") + pick(WORDS);
	return s;
}
const hex = (n) => Array.from({ length: n }, () => "0123456789abcdef"[int(16)]).join("");
const uuid = () => `${hex(8)}-${hex(4)}-7${hex(3)}-${"89ab"[int(4)]}${hex(3)}-${hex(12)}`;
const iso = (ms) => new Date(ms).toISOString();

// One session file's lines, and the line break to use between them.
function makeSession(base, tieTimes) {
	const lines = [];
	const id = uuid();
	const start = base + int(1e6);
	lines.push(JSON.stringify({ type: "session", version: 3, id, timestamp: iso(start), cwd: pick(CWDS) }));
	const ids = [];
	let t = start;
	const n = 1 + int(14);
	for (let i = 0; i < n; i++) {
		const eid = hex(8);
		const parentId = ids.length && chance(0.25) ? pick(ids) : ids.length ? ids[ids.length - 1] : null;
		ids.push(eid);
		t += 1 + int(5000);
		const e = { type: "message", id: eid, parentId, timestamp: iso(t) };
		const r = rand();
		if (r < 0.1) {
			lines.push(JSON.stringify({ type: "session_info", id: eid, parentId, timestamp: iso(t), name: pick(NAMES) }));
			continue;
		}
		if (r < 0.13) {
			lines.push(JSON.stringify({ type: "session_info", id: eid, parentId, timestamp: iso(t) }));
			continue;
		}
		if (r < 0.16) {
			lines.push(JSON.stringify({ type: "custom", id: eid, parentId, timestamp: iso(t), customType: "x", data: { text: sentence(3) } }));
			continue;
		}
		if (r < 0.18) {
			lines.push(pick(["", "   ", "{not json", "[1,2]", "null", "42", '"str"']));
			continue;
		}
		const role = pick(["user", "user", "assistant", "assistant", "toolResult", "bashExecution", "custom"]);
		const msg = { role };
		if (role === "bashExecution") {
			Object.assign(msg, { command: sentence(2), output: sentence(4), exitCode: 0 });
		} else if (role === "toolResult") {
			Object.assign(msg, { toolCallId: hex(6), toolName: "bash", content: [{ type: "text", text: sentence(5) }], isError: false });
		} else if (chance(0.4)) {
			msg.content = sentence(1 + int(6));
		} else {
			const blocks = [];
			for (let b = int(4); b >= 0; b--) {
				const k = rand();
				if (k < 0.55) blocks.push({ type: "text", text: sentence(1 + int(5)) });
				else if (k < 0.65) blocks.push({ type: "text", text: pick([42, 1.5, null, true, "", 1e21, 5e-7, [1, [2, null]], { a: 1 }]) });
				else if (k < 0.75) blocks.push({ type: "text" });
				else if (k < 0.85) blocks.push({ type: "thinking", thinking: sentence(3) });
				else if (k < 0.95) blocks.push({ type: "toolCall", id: hex(6), name: "read", arguments: { path: sentence(1) } });
				else blocks.push({ type: "image", data: "AAAA", mimeType: "image/png" });
			}
			msg.content = blocks;
		}
		if (chance(0.8)) msg.timestamp = tieTimes ? tieTimes : t;
		else if (chance(0.3)) delete e.timestamp;
		e.message = msg;
		lines.push(JSON.stringify(e));
	}
	// What pi skips before the header (and, rarely, a truthy value that
	// makes the file no session).
	if (chance(0.12)) lines.unshift(pick(["", "   ", "{bad", "null", "0", '""', "false", "42"]));
	return { id, lines };
}

function writeStore(dir, k) {
	mkdirSync(dir, { recursive: true });
	const files = [];
	const base = Date.UTC(2026, 0, 1) + k * 1e8;
	const tie = base + 5e6;
	const count = 6 + int(10);
	for (let i = 0; i < count; i++) {
		const s = makeSession(base, chance(0.25) ? tie : 0);
		const stamp = iso(base + int(1e7)).replace(/[:.]/g, "-");
		const name = `${stamp}_${s.id}.jsonl`;
		let text;
		const eol = chance(0.15) ? "\r\n" : chance(0.05) ? "\r" : "\n";
		text = s.lines.join(eol) + (chance(0.15) ? "" : eol);
		writeFileSync(join(dir, name), text);
		files.push(name);
	}
	// Files pi does not list: no header first, an empty file, a bad name.
	writeFileSync(join(dir, `2026-01-01T00-00-00-000Z_${uuid()}.jsonl`), JSON.stringify({ type: "message", id: "x", message: { role: "user", content: "deploy" } }) + "\n");
	writeFileSync(join(dir, `2026-01-01T00-00-00-001Z_${uuid()}.jsonl`), "");
	// A message without its message: pi's reader throws, the session is dropped.
	writeFileSync(join(dir, `2026-01-01T00-00-00-002Z_${uuid()}.jsonl`),
		JSON.stringify({ type: "session", version: 3, id: uuid(), timestamp: iso(base), cwd: "/dropped" }) + "\n" +
		JSON.stringify({ type: "message", id: "y", parentId: null, timestamp: iso(base) }) + "\n");
	return files;
}

// Queries drawn from the store's own text.
function queries(infos) {
	const texts = infos.map((i) => `${i.name ?? ""} ${i.allMessagesText} ${i.cwd}`);
	const words = texts.join(" ").split(/\s+/).filter(Boolean);
	const word = () => (words.length ? pick(words) : pick(WORDS));
	const caseFlip = (w) => (chance(0.5) ? w.toUpperCase() : chance(0.5) ? w.toLowerCase() : w);
	// By code points: a query is a file name, UTF-8, and cannot hold a
	// lone surrogate.
	const sub = (w) => {
		const c = [...w], a = int(c.length), b = a + 1 + int(c.length - a);
		return c.slice(a, b).join("");
	};
	const subseq = (w) => [...w].filter(() => chance(0.6)).join("") || w;
	const reEsc = (w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
	// Regexes keep off what docs/search.md lists as known differences:
	// characters whose case-insensitive equals differ between JavaScript
	// (toUpperCase, without the u flag) and PCRE2 (Unicode case folding),
	// and characters beyond U+FFFF (two units to JavaScript, one to PCRE2).
	const reWord = () => {
		for (let i = 0; i < 20; i++) {
			const w = word();
			if (!KNOWN_RE_DIFF.test(w)) return w;
		}
		return "deploy";
	};
	const fieldSubseq = () => {
		const i = pick(infos);
		const f = chance(0.5) && i.name ? i.name : i.cwd;
		return subseq(f.replace(/\s+/g, "")) || "x";
	};
	const gens = [
		() => caseFlip(word()),
		() => sub(word()),
		() => `${caseFlip(word())} ${sub(word())}`,
		() => `"${word()}${pick(SPACES)}${word()}"`,
		() => `"${caseFlip(word())}  ${pick(["\t", " ", "   "])}${word()}" ${sub(word())}`,
		() => fieldSubseq(),
		() => pick(["2v", "v2", "123abc", "abc123", "22node", "fix2v", "c1b2"]),
		() => `re:${reEsc(sub(reWord()))}`,
		() => `re:${reEsc(reWord())}.*${reEsc(reWord())}`,
		() => `re:^${reEsc(sub(reWord()))}`,
		() => `re:\\b${reEsc(sub(reWord()))}\\b`,
		() => pick(["re:[a-z]+\\d", "re:\\s{2,}", "re:\\u00e9", "re:σοφ", "re:(de|mi)gr", "re:ΣΟΦΙΑ$", "re:[à-ÿ]{2}", "re:[^\\x00-\\x7f]",
			"re:str(a|ß)", "re:\\w+_\\w+", "re:(?:x\\.y)", "re:a\\+b", "re:\\p", "re:\\A", "re:.", "re:[\\s\\S]deploy",
			"re:(?<w>de)ploy\\k<w>?", "re:\\1(a)", "re:(?=dep)deploy", "re:x{2,}", "re:\\cJ", "re:[]", "re:[^]", "re:日本"]),
		() => pick(["re:(", "re:[", "re:*a", "re:a{2,1}", "re:", "re:   ", "re:a++", "re:(?i)a", "re:(?<=a)*", "re:\\", "re:a)", "re:[z-a]", "re:(?<a>x)(?<a>y)", "re:(?<x>a)\\k<y>"]),
		() => `"${word()} ${word()}`,
		() => `${word()} "${sub(word())}`,
		() => pick(["", "   ", '""', '" "', "\u3000"]),
		// A / and a %: through the mount as %2F and %25.
		() => pick(["re:a/b", "re:[/]", "re:\\/", "/", "%2F", "%", "50%", `${sub(word())}/${sub(word())}`, `"${word()} /"`,
			`re:${reEsc(sub(reWord()))}/`, "%25", "%41"]),
		() => `zq${hex(6)}`,
		() => `${sub(word())}${pick(SPACES)}${sub(word())}${pick(SPACES)}${fieldSubseq()}`,
	];
	const out = [];
	for (let i = 0; i < nQueries; i++) out.push(pick(gens)());
	return out;
}

function runSearch(argv, query, files) {
	const qfile = join(work, "query.txt");
	writeFileSync(qfile, query + "\n");
	return spawnSync(pisession, ["search", ...argv, "-f", qfile, ...files], { encoding: "utf8", maxBuffer: 1 << 30 });
}

let compared = 0, passed = 0, failed = 0, infoCompared = 0, infoFailed = 0;
const fail = (what) => {
	failed++;
	console.log(`FAIL ${what}`);
};
// Emptied, not removed: the mount's store is this directory.
mkdirSync(work, { recursive: true });
for (const f of readdirSync(work)) rmSync(join(work, f), { recursive: true, force: true });
let mountCompared = 0, mountSkipped = 0;
// What the mount's search directory lists, as store file paths in its
// order; { error } when listing it failed.
// A query as a search directory's name (docs/layout.md "Searching"): %
// as %25, / as %2F.
const queryName = (q) => q.replaceAll("%", "%25").replaceAll("/", "%2F");
// Whether the mount can be asked q: its name must be one path component.
const mountable = (q) => {
	const n = queryName(q);
	return q.trim() !== "" && n !== "." && n !== ".." && Buffer.byteLength(n) <= 255;
};
function mountSearch(k, dir, q) {
	const top = join(mount, `store${k}`, "search", queryName(q));
	let names;
	try {
		names = readdirSync(top);
	} catch (e) {
		return { error: e.code };
	}
	const rank = (n) => Number(n.slice(0, n.indexOf("-")));
	names.sort((a, b) => rank(a) - rank(b));
	return { paths: names.map((n) => join(dir, readlinkSync(join(top, n, "session")).split("/").pop() + ".jsonl")) };
}
for (let k = 0; k < nStores; k++) {
	const dir = join(work, `store${k}`);
	writeStore(dir, k);
	// The mount's table of sessions is at most a second old.
	if (mount) await new Promise((r) => setTimeout(r, 1100));
	const infos = await SessionManager.listAll(dir);
	// pi read the folder's names with localeCompare, descending: the order
	// the C side must be given for the ties to come out the same.
	const order = readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort((a, b) => b.localeCompare(a)).map((f) => join(dir, f));

	// The infos.
	const r = runSearch(["--json", "--text"], "", order);
	const mine = r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l));
	if (mine.length !== infos.length) {
		infoFailed++;
		console.log(`FAIL store${k} infos: pi lists ${infos.length}, pisession ${mine.length}`);
	}
	for (let i = 0; i < Math.min(mine.length, infos.length); i++) {
		const a = infos[i], b = mine[i];
		infoCompared++;
		const want = { path: a.path, id: a.id, cwd: a.cwd, name: a.name ?? null, modified: a.modified.getTime(), messageCount: a.messageCount, firstMessage: a.firstMessage, allMessagesText: a.allMessagesText };
		const got = { path: b.path, id: b.id, cwd: b.cwd, name: b.name, modified: b.modified, messageCount: b.messageCount, firstMessage: b.firstMessage, allMessagesText: b.allMessagesText };
		for (const key of Object.keys(want)) {
			if (want[key] !== got[key]) {
				infoFailed++;
				console.log(`FAIL store${k} info #${i} ${key}: pi ${JSON.stringify(want[key]).slice(0, 300)} pisession ${JSON.stringify(got[key]).slice(0, 300)}`);
				break;
			}
		}
	}

	for (const q of queries(infos)) {
		compared++;
		const parsed = parseSearchQuery(q);
		const piErr = q.trim() !== "" && parsed.error !== undefined;
		const want = filterAndSortSessions(infos, q, "recent").map((s) => s.path);
		const res = runSearch([], q, order);
		const gotErr = res.status === 1 && /search: /.test(res.stderr);
		const got = res.status === 0 ? res.stdout.split("\n").filter(Boolean).map((l) => l.split("\t")[1]) : [];
		const label = `store${k} query ${JSON.stringify(q)}`;
		if (res.status !== 0 && !gotErr) {
			fail(`${label}: pisession exited ${res.status}: ${res.stderr.slice(0, 200)}`);
		} else if (piErr !== gotErr) {
			fail(`${label}: pi ${piErr ? "refuses it (" + parsed.error + ")" : "accepts it"}, pisession ${gotErr ? "refuses it: " + res.stderr.trim() : "accepts it"}`);
		} else if (JSON.stringify(want) !== JSON.stringify(got)) {
			fail(`${label}: pi lists ${want.length} [${want.map((p) => p.slice(-12)).join(" ")}], pisession ${got.length} [${got.map((p) => p.slice(-12)).join(" ")}]`);
		} else if (mount && !mountable(q)) {
			// Not a path component: the CLI's answer alone is compared.
			mountSkipped++;
			passed++;
		} else if (mount) {
			mountCompared++;
			const m = mountSearch(k, dir, q);
			if (piErr !== (m.error === "EINVAL")) {
				fail(`${label}: through the mount: pi ${piErr ? "refuses it" : "accepts it"}, the mount ${m.error ? "gives " + m.error : "lists it"}`);
			} else if (!piErr && JSON.stringify(want) !== JSON.stringify(m.paths)) {
				fail(`${label}: pi lists ${want.length} [${want.map((p) => p.slice(-12)).join(" ")}], the mount ${m.paths.length} [${m.paths.map((p) => p.slice(-12)).join(" ")}]`);
			} else {
				passed++;
				if (verbose) console.log(`ok   ${label} (${want.length}, mount too)`);
			}
		} else {
			passed++;
			if (verbose) console.log(`ok   ${label} (${want.length})`);
		}
	}
}
// The whole store: MOUNT/search/QUERY/ against pi's SessionManager.listAll()
// (every folder, ordered by file time and name before pi's stable sort).
let allCompared = 0;
if (mount) {
	const all = await SessionManager.listAll();
	for (const q of queries(all)) {
		if (!mountable(q))
			continue;
		compared++;
		allCompared++;
		const parsed = parseSearchQuery(q);
		const piErr = parsed.error !== undefined;
		const want = filterAndSortSessions(all, q, "recent").map((s) => s.path);
		const top = join(mount, "search", queryName(q));
		let got = null, error = null;
		try {
			const names = readdirSync(top);
			const rank = (n) => Number(n.slice(0, n.indexOf("-")));
			names.sort((a, b) => rank(a) - rank(b));
			got = names.map((n) => join(work, readlinkSync(join(top, n, "session")).replace(/^(\.\.\/)+/, "") + ".jsonl"));
		} catch (e) {
			error = e.code;
		}
		const label = `whole store query ${JSON.stringify(q)}`;
		if (piErr !== (error === "EINVAL"))
			fail(`${label}: pi ${piErr ? "refuses it" : "accepts it"}, the mount ${error ? "gives " + error : "lists it"}`);
		else if (!piErr && JSON.stringify(want) !== JSON.stringify(got))
			fail(`${label}: pi lists ${want.length} [${want.map((p) => p.slice(-12)).join(" ")}], the mount ${got.length} [${got.map((p) => p.slice(-12)).join(" ")}]`);
		else
			passed++;
	}
}
console.log(`search-diff: seed ${seed}: ${infoCompared} infos compared, ${infoFailed} differed; ${compared} queries compared, ${passed} passed, ${failed} failed` +
	(mount ? `; ${mountCompared} of them through the mount too (${mountSkipped} are no path component), ${allCompared} over the whole store` : ""));
// The closing line tests/check-all.sh counts: every info and every query.
console.log(`${passed + infoCompared - Math.min(infoFailed, infoCompared)} passed, ${failed + infoFailed} failed`);
process.exit(failed || infoFailed ? 1 : 0);
