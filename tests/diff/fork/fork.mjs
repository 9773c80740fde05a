// Differential test of `pisession fork` against pi 1.6.0's /fork, i.e.
// SessionManager.open(file, dir).createBranchedSession(id).
//
//   node fork.mjs --sm PATH/session-manager.js --pisession build/pisession
//                 --work DIR [--seed S] [--per-file N] [-v] FILE|DIR...
//
// The session files are the given ones (a directory: its *.jsonl files, at
// any depth; files with the same bytes once) and sessions this script
// writes (gen/): some with pi's own SessionManager (labels set, moved,
// cleared and set again, entries hung under labels, a compaction whose
// firstKeptEntryId is a label, branches), some written raw (a v2 file with
// hookMessage, a cwd with "//", "." and "..", odd key orders, numbers and
// escapes, a label without timestamp, labels that are not strings).
// For each file pi loads and for each chosen entry (all of them up to
// --per-file entries, else the first, the last, every compaction and label
// and the entry after it, and random ones), a fresh copy of the file at one
// path is forked by `pisession fork COPY ID --dir OURS` (the copy must be
// byte-identical after it) and then by pi (open(COPY, PIS), which may
// migrate the copy in place, then createBranchedSession(ID)); every third
// fork also appends a name (--name / appendSessionInfo).  pi writes the
// file only when the path has a user or assistant message; otherwise its
// in-memory fileEntries, JSON.stringify'd, are what it would write, and are
// compared instead.  The two outputs must agree line by line, byte for
// byte, after the header's id and timestamp, the new label entries' ids and
// the session_info's id and timestamp are replaced by placeholders.
// Version-1 files have no ids (pi makes random ones, we derive ours): the
// entry is chosen by position and pi's ids are mapped to ours line by line
// before comparing.  A file pi refuses must be refused by pisession too.
// Prints "check-diff-fork: N passed, M failed".
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, existsSync } from "node:fs";
import { createHash } from "node:crypto";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { mulberry32 } from "../mulberry32.mjs";

const args = process.argv.slice(2);
const opts = {};
const inputs = [];
for (let i = 0; i < args.length; i++) {
	if (args[i] === "-v") opts.v = true;
	else if (args[i].startsWith("--")) opts[args[i].slice(2)] = args[++i];
	else inputs.push(args[i]);
}
const pisession = resolve(opts.pisession);
const work = resolve(opts.work);
const perFile = Number(opts["per-file"] ?? 40);
const { SessionManager } = await import(pathToFileURL(resolve(opts.sm)).href);

const rand = mulberry32(Number(opts.seed ?? 20261201));

let passed = 0, failed = 0;
const fail = (what) => {
	failed++;
	console.log(`FAIL ${what}`);
};

// ---- sessions of our own ----------------------------------------------------
const gen = join(work, "gen");
rmSync(gen, { recursive: true, force: true });
mkdirSync(gen, { recursive: true });
const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: 1 });
const assistant = (text) => ({
	role: "assistant", content: [{ type: "text", text }], api: "fake", provider: "fake", model: "fake-1",
	usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
	stopReason: "stop", timestamp: 2,
});
function piWritten(name, build) {
	const dir = join(gen, name);
	mkdirSync(dir, { recursive: true });
	const sm = SessionManager.create("/home/u/proj", dir);
	build(sm);
	return sm.getSessionFile();
}
// Labels moving about, entries hung under labels, a compaction kept from a label.
piWritten("labels", (sm) => {
	sm.appendModelChange("fake", "fake-1");
	sm.appendThinkingLevelChange("off");
	const u1 = sm.appendMessage(user("first question"));
	const a1 = sm.appendMessage(assistant("first answer"));
	sm.appendLabelChange(u1, "q1");
	const lab = sm.appendLabelChange(a1, "ans");
	const u2 = sm.appendMessage(user("second, hung under two labels"));
	sm.appendLabelChange(a1, "");          // removed later
	sm.appendLabelChange(u1, "q1-again");  // set again: stays first
	sm.appendLabelChange(u2, "second");
	sm.appendLabelChange(u2, undefined);
	sm.appendLabelChange(u2, "second-back"); // cleared and set again: moves last
	sm.appendCompaction("summary kept from a label", lab, 1234);
	const a2 = sm.appendMessage(assistant("after the compaction"));
	sm.appendLabelChange(a1, "ans-back");
	sm.appendCustomEntry("ext", { k: [1, 2] });
	sm.appendCustomMessageEntry("note", "custom text", true, { d: 1 });
	sm.appendSessionInfo("labels demo");
	sm.branch(u1);
	const u3 = sm.appendMessage(user("another branch"));
	sm.appendLabelChange(u3, "branch");
	sm.appendMessage(assistant("branch answer"));
	sm.appendLabelChange(a2, "off-path-for-branch");
	sm.branchWithSummary(a1, "summary of the left branch");
	sm.appendMessage(user("after a branch summary"));
});
// No user or assistant message: pi keeps the fork in memory.
piWritten("setup-only", (sm) => {
	sm.appendModelChange("fake", "fake-1");
	sm.appendThinkingLevelChange("high");
	const c = sm.appendCustomEntry("ext", null);
	sm.appendLabelChange(c, "setup");
	sm.appendMessage(user("now a conversation"));
});
const H = (extra = "") => `{"type":"session","version":3,"id":"raw-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home//u/./p/../q/"${extra}}\n`;
const raw = (name, lines) => writeFileSync(join(gen, `${name}.jsonl`), lines.join(""));
raw("raw-v3", [
	H(),
	`{"type":"model_change","id":"m1","timestamp":"2026-01-01T00:00:01.000Z","provider":"p","modelId":"x"}\n`, // no parentId key
	`{"parentId":"m1","id":"u1","type":"message","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"h\\u00e9llo \\u2028 \\ud83d\\ude00 \\ud800 \\"q\\" \\/","timestamp":1}}\n`,
	`{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"n"}],"n":[1e21,0.1,-0,1E5,1.50,123456789012345678901234567890,-1e-7],"2":"two","b":1,"1":"one","dup":1,"dup":2}}\r\n`,
	`{"type":"label","id":"l1","parentId":"a1","timestamp":"2026-01-01T00:00:04.000Z","targetId":"u1","label":"no-ts-next"}\n`,
	`{"type":"label","id":"l2","parentId":"l1","targetId":"a1","label":7}\n`,
	`{"type":"label","id":"l3","parentId":"l2","timestamp":5,"targetId":"m1","label":{"o":1}}\n`,
	`{"type":"label","id":"l4","parentId":"l3","timestamp":"2026-01-01T00:00:05.000Z","targetId":"zz","label":"no such target"}\n`,
	`{"type":"compaction","id":"c1","parentId":"l4","timestamp":"2026-01-01T00:00:06.000Z","summary":"s","firstKeptEntryId":"l2","tokensBefore":9}\n`,
	`\n`,
	`not json at all\n`,
	`{"type":"compaction","id":"c2","parentId":"c1","timestamp":"2026-01-01T00:00:07.000Z","summary":"s","firstKeptEntryId":"c2","tokensBefore":9}\n`,
	`{"type":"label","id":"l5","parentId":"c2","timestamp":"2026-01-01T00:00:08.000Z","targetId":"c2","label":"last"}\n`,
	`{"type":"label","id":"l6","parentId":"l5","timestamp":"2026-01-01T00:00:09.000Z","targetId":"a1","label":0}\n`,
	`{"type":"compaction","id":"c3","parentId":"l6","timestamp":"2026-01-01T00:00:10.000Z","summary":"s","firstKeptEntryId":"l5","tokensBefore":9}\n`,
	`{"type":"message","id":"u2","parentId":"c3","timestamp":"2026-01-01T00:00:11.000Z","message":{"role":"user","content":"end"}}\n`,
]);
raw("raw-v2", [
	`{"type":"session","version":2,"id":"raw-2","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n`,
	`{"type":"message","id":"h1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"hookMessage","customType":"x","content":"hook","display":true,"timestamp":1}}\n`,
	`{"type":"message","id":"u1","parentId":"h1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"q"}}\n`,
	`{"type":"label","id":"l1","parentId":"u1","timestamp":"2026-01-01T00:00:03.000Z","targetId":"h1","label":"hook"}\n`,
	`{"type":"message","id":"a1","parentId":"l1","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[]}}\n`,
]);

// ---- the files ----------------------------------------------------------------
const files = [];
const seen = new Set();
function add(p) {
	const st = statSync(p);
	if (st.isDirectory()) {
		for (const n of readdirSync(p).sort()) add(join(p, n));
		return;
	}
	if (!p.endsWith(".jsonl")) return;
	const h = createHash("sha1").update(readFileSync(p)).digest("hex");
	if (seen.has(h)) return;
	seen.add(h);
	files.push(p);
}
for (const p of [...inputs, gen]) add(resolve(p));

const run = (argv) => spawnSync(pisession, argv, { encoding: "utf8", maxBuffer: 1 << 30 });
const lines = (text) => text.split("\n").slice(0, -1);

// Placeholders for what is new in every fork.
function normalize(ls, nPath) {
	const out = [...ls];
	out[0] = out[0].replace(/^(\{"type":"session","version":3,"id":")[^"]*(","timestamp":")[^"]*"/, '$1ID$2NOW"');
	const fresh = new Map();
	for (let i = 1 + nPath; i < out.length; i++) {
		const m = /^\{"type":"(label|session_info)","id":"([^"]*)"/.exec(out[i]);
		if (m) fresh.set(m[2], `NEW${fresh.size}`);
	}
	for (let i = 1 + nPath; i < out.length; i++) {
		out[i] = out[i].replace(/"(id|parentId)":"([^"]*)"/g, (all, k, v) => (fresh.has(v) ? `"${k}":"${fresh.get(v)}"` : all));
		if (out[i].startsWith('{"type":"session_info"'))
			out[i] = out[i].replace(/"timestamp":"[^"]*"/, '"timestamp":"NOW"');
	}
	return out;
}

const NAMES = ["  renamed\r\n\r\nfork ", "Straße\u00a0\u3000", "plain"];
let forks = 0, inMemory = 0, refusals = 0, v1forks = 0;

for (const file of files) {
	const tag = basename(file);
	const src = join(work, "src");
	rmSync(src, { recursive: true, force: true });
	mkdirSync(src, { recursive: true });
	const copy = join(src, tag);
	const bytes = readFileSync(file);
	const fresh = () => writeFileSync(copy, bytes);
	fresh();
	let sm;
	try {
		sm = SessionManager.open(copy, join(work, "probe"));
	} catch {
		sm = null;
	}
	if (!sm) {
		fresh();
		const ours = join(work, "ours");
		rmSync(ours, { recursive: true, force: true });
		mkdirSync(ours);
		const r = run(["fork", copy, "x", "--dir", ours]);
		if (r.status === 0 || readdirSync(ours).length) fail(`${tag}: pi refuses the file, pisession fork did not`);
		else passed++;
		refusals++;
		continue;
	}
	const header = JSON.parse(bytes.toString("utf8").split("\n")[0]);
	const v1 = (header.version ?? 1) < 2;
	const entries = sm.getEntries();
	let ourIds = entries.map((e) => e.id);
	if (v1) {
		fresh();
		ourIds = [];
		for (const l of lines(run(["tree", copy]).stdout)) {
			const m = /^(\d+)-[^/]*\.([0-9a-f]{8})\.md$/.exec(l);
			if (m) ourIds[Number(m[1]) - 1] = m[2];
		}
		if (ourIds.length !== entries.length) {
			fail(`${tag}: pi has ${entries.length} entries, the tree ${ourIds.length}`);
			continue;
		}
	}
	let picks = entries.map((_, i) => i);
	if (entries.length > perFile) {
		const set = new Set([0, entries.length - 1]);
		entries.forEach((e, i) => {
			if (e.type === "compaction" || e.type === "label") {
				set.add(i);
				if (i + 1 < entries.length) set.add(i + 1);
			}
		});
		while (set.size < perFile) set.add(Math.floor(rand() * entries.length));
		picks = [...set].sort((a, b) => a - b);
	}
	for (const k of picks) {
		const name = forks % 3 === 2 ? NAMES[forks % NAMES.length] : null;
		const what = `${tag} @${ourIds[k]}${name ? " (named)" : ""}`;
		forks++;
		const ours = join(work, "ours"), theirs = join(work, "theirs");
		for (const d of [ours, theirs]) {
			rmSync(d, { recursive: true, force: true });
			mkdirSync(d);
		}
		fresh();
		const r = run(["fork", copy, ourIds[k], "--dir", ours, ...(name ? ["--name", name] : [])]);
		const made = readdirSync(ours);
		if (!readFileSync(copy).equals(bytes)) {
			fail(`${what}: pisession fork changed the source`);
			continue;
		}
		if (r.status !== 0 || made.length !== 1 || r.stdout !== `${join(ours, made[0])}\n`) {
			fail(`${what}: pisession fork: status ${r.status}, ${made.length} files, said ${JSON.stringify(r.stdout)} ${r.stderr}`);
			continue;
		}
		const ourLines = lines(readFileSync(join(ours, made[0]), "utf8"));
		const h = JSON.parse(ourLines[0]);
		if (made[0] !== `${h.timestamp.replace(/[:.]/g, "-")}_${h.id}.jsonl` || !/^[0-9a-f]{8}-[0-9a-f]{4}-7/.test(h.id)) {
			fail(`${what}: the file's name ${made[0]} is not pi's for its header`);
			continue;
		}
		// pi on the same copy.
		fresh();
		const pm = SessionManager.open(copy, theirs);
		const piLeaf = pm.getEntries()[k].id;
		const piFile = pm.createBranchedSession(piLeaf);
		if (name) pm.appendSessionInfo(name);
		let piLines;
		if (existsSync(piFile)) {
			piLines = lines(readFileSync(piFile, "utf8"));
			const mem = pm.fileEntries.map((e) => JSON.stringify(e));
			if (mem.join("\n") !== piLines.join("\n")) {
				fail(`${what}: pi's file is not its fileEntries (the test's assumption)`);
				continue;
			}
		} else {
			inMemory++;
			piLines = pm.fileEntries.map((e) => JSON.stringify(e));
		}
		// The path is what comes before the new labels (the path holds
		// none: they were dropped) and the new name.
		let pathEnd = pm.fileEntries.length - (name ? 1 : 0);
		while (pathEnd > 1 && pm.fileEntries[pathEnd - 1].type === "label") pathEnd--;
		const pathLen = pathEnd - 1;
		if (v1) {
			v1forks++;
			const map = new Map();
			for (let i = 1; i <= pathLen && i < ourLines.length; i++) map.set(JSON.parse(piLines[i]).id, JSON.parse(ourLines[i]).id);
			piLines = piLines.map((l, i) => (i === 0 ? l : l.replace(/"([0-9a-f]{8})"/g, (all, id) => (map.has(id) ? `"${map.get(id)}"` : all))));
		}
		const a = normalize(ourLines, pathLen), b = normalize(piLines, pathLen);
		let diff = -1;
		for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) { diff = i; break; }
		if (diff >= 0) {
			fail(`${what}: line ${diff + 1} differs (${a.length} lines, pi ${b.length})\n  ours: ${(a[diff] ?? "(none)").slice(0, 400)}\n  pi:   ${(b[diff] ?? "(none)").slice(0, 400)}`);
			continue;
		}
		passed++;
		if (opts.v) console.log(`ok ${what}: ${a.length} lines`);
	}
}
console.log(`check-diff-fork: ${files.length} files, ${forks} forks compared (${inMemory} that pi keeps in memory until a message, ${v1forks} of version-1 files), ${refusals} files pi refuses`);
console.log(`check-diff-fork: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
